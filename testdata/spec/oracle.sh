#!/usr/bin/env bash
# oracle.sh — ask PostgreSQL 15 what each lock schedule does.
#
#   testdata/spec/oracle.sh [FILE.spec | NAME ...]
#
# For each spec (default: every testdata/spec/*.spec and examples/*.spec), it
#   1. regenerates the PostgreSQL twin NAME.pg.spec  (go run ./isospec/cmd/spec2pg),
#   2. runs the twin through PostgreSQL 15's isolationtester against a
#      throw-away server on a free loopback port, storing the raw output as
#      NAME.pg.out,
#   3. converts NAME.pg.out into the runner's format as NAME.out
#      (go run ./isospec/cmd/pg2out).
# Commit all four files. `go test ./isospec` then checks tupled against NAME.out
# and that NAME.out is what pg2out makes of NAME.pg.out.
#
# PostgreSQL refuses to run as root: as root the server runs as user postgres.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
ISOLATIONTESTER=${ISOLATIONTESTER:-/usr/lib/postgresql/15/lib/pgxs/src/test/isolation/isolationtester}
# isolationtester cancels a step after this many seconds (default 360); the
# runner's default step timeout is 30 s, so a stuck step reads the same in both.
export PGISOLATIONTIMEOUT=${PGISOLATIONTIMEOUT:-30}

for tool in "$PGBIN/initdb" "$PGBIN/pg_ctl" "$ISOLATIONTESTER"; do
	[ -x "$tool" ] || { echo "oracle.sh: $tool not found (PostgreSQL 15 with its isolation tester is needed)" >&2; exit 1; }
done

# The specs to run.
specs=()
if [ $# -eq 0 ]; then
	for f in testdata/spec/*.spec examples/*.spec; do
		case "$f" in *.pg.spec) ;; *) [ -e "$f" ] && specs+=("$f") ;; esac
	done
else
	for a in "$@"; do
		case "$a" in
			*.pg.spec) specs+=("${a%.pg.spec}.spec") ;;
			*.spec) specs+=("$a") ;;
			*) specs+=("testdata/spec/$a.spec") ;;
		esac
	done
fi
for f in "${specs[@]}"; do
	[ -f "$f" ] || { echo "oracle.sh: no such spec: $f" >&2; exit 1; }
done

go run ./isospec/cmd/spec2pg "${specs[@]}"

# Run as postgres when we are root.
as_pg() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A free loopback port.
port=""
for p in $(seq 55432 55532); do
	if ! ss -ltnH 2>/dev/null | awk '{print $4}' | grep -qE "[:.]$p\$"; then port=$p; break; fi
done
[ -n "$port" ] || { echo "oracle.sh: no free port in 55432-55532" >&2; exit 1; }

dir=$(mktemp -d /tmp/tupled-oracle.XXXXXX)
[ "$(id -u)" = 0 ] && chown postgres "$dir"
cleanup() {
	as_pg "$PGBIN/pg_ctl" -D "$dir/data" stop -m immediate >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT

as_pg "$PGBIN/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
as_pg "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
	-o "-c port=$port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$dir -c fsync=off" start >/dev/null
conn="host=127.0.0.1 port=$port user=postgres dbname=postgres"

status=0
for f in "${specs[@]}"; do
	base=${f%.spec}
	printf '%-50s ' "$f"
	start=$(date +%s.%N)
	if "$ISOLATIONTESTER" "$conn" <"$base.pg.spec" >"$base.pg.out.tmp" 2>"$dir/stderr"; then
		mv "$base.pg.out.tmp" "$base.pg.out"
		awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "ok  %5.1fs\n", e - s }'
	else
		echo "FAILED"
		cat "$dir/stderr" >&2
		rm -f "$base.pg.out.tmp"
		status=1
	fi
done
[ $status = 0 ] || { echo "oracle.sh: isolationtester failed; server log: see above" >&2; exit 1; }

go run ./isospec/cmd/pg2out "${specs[@]}"
echo "oracle.sh: wrote ${#specs[@]} .pg.out and .out files"
