#!/bin/sh
# Writes NAME.expected: PostgreSQL 15's answer to each line of NAME.cases.
# Usage: PGPORT=5499 ./gen.sh interval timeofday (a server on 127.0.0.1,
# user postgres; see /work/shared/reference/postgres-oracle.md to start one).
set -eu
cd "$(dirname "$0")"
conn="host=127.0.0.1 port=${PGPORT:-5499} user=postgres dbname=postgres"
q() { printf '%s' "$1" | sed "s/'/''/g"; }
for name in "$@"; do
grep -v '^#' "$name.cases" | while IFS='	' read -r kind a b; do
	case $kind in
	in) sql="select '$(q "$a")'::interval" ;;
	add) sql="select '$a'::timestamp + '$b'::interval" ;;
	sub) sql="select '$a'::timestamp - '$b'::timestamp" ;;
	mul) sql="select '$a'::interval * $b::float8" ;;
	div) sql="select '$a'::interval / $b::float8" ;;
	justify_*) sql="select $kind('$a'::interval)" ;;
	extract) sql="select extract($a from '$b'::interval)" ;;
	trunc) sql="select date_trunc('$a', '$b'::interval)" ;;
	cmp) sql="select case when '$a'::interval < '$b'::interval then -1 when '$a'::interval = '$b'::interval then 0 else 1 end" ;;
	send) sql="select encode(interval_send('$a'::interval), 'hex')" ;;
	tin) sql="select '$(q "$a")'::time" ;;
	tadd) sql="select '$a'::time + '$b'::interval" ;;
	tsub) sql="select '$a'::time - '$b'::time" ;;
	tat) sql="select '$a'::date + '$b'::time" ;;
	textract) sql="select extract($a from '$b'::time)" ;;
	tsend) sql="select encode(time_send('$a'::time), 'hex')" ;;
	*) echo "unknown kind $kind" >&2; exit 1 ;;
	esac
	out=$(psql "$conn" -XAtq -v VERBOSITY=sqlstate -c "set IntervalStyle = postgres" -c "$sql" 2>&1) || true
	case $out in
	ERROR:*) out="ERROR $(printf '%s' "$out" | sed -n 's/^ERROR:  \([0-9A-Z]\{5\}\).*/\1/p')" ;;
	esac
	printf '%s\t%s\t%s\t%s\n' "$kind" "$a" "$b" "$out"
done > "$name.expected"
done
