# Sourced by the bench/pg scripts (bash, set -euo pipefail, run from the
# repository root). Needs PGCONN: a PostgreSQL 15 connection string.
#
#   bench_dir NAME          makes the scratch directory D (removed on exit,
#                           with the tupled server)
#   tupled_serve [FLAGS]    builds cmd/tupled into D and serves it on a free
#                           loopback port, on disk in D/data; sets TU (its
#                           connection string) and tpid (its process)
#   pg_database NAME        drops and creates database NAME on PGCONN; sets PG
#   conn_of SYS             the connection string of tupled or postgres
#   bench_start NAME DB     all three: bench_dir NAME, tupled_serve,
#                           pg_database DB
: "${PGCONN:?set PGCONN to a PostgreSQL 15 connection string}"
tpid=

bench_dir() {
	D=$(mktemp -d "/tmp/$1.XXXX")
	trap '[ -n "$tpid" ] && kill $tpid 2>/dev/null; rm -rf "$D"' EXIT
}

tupled_serve() {
	go build -o "$D/tupled" ./cmd/tupled
	local port
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$D/tupled" serve --listen 127.0.0.1:$port --data "$D/data" "$@" >"$D/serve.log" 2>&1 &
	tpid=$!
	TU="host=127.0.0.1 port=$port user=t dbname=t sslmode=disable"
	for _ in $(seq 100); do
		psql "$TU" -Atc 'select 1' >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "tupled serve did not start: $(cat "$D/serve.log")" >&2
	return 1
}

pg_database() {
	psql "$PGCONN" -qc "drop database if exists $1" -c "create database $1"
	PG="$PGCONN dbname=$1"
}

conn_of() {
	if [ "$1" = tupled ]; then echo "$TU"; else echo "$PG"; fi
}

bench_start() {
	bench_dir "$1"
	tupled_serve
	pg_database "$2"
}
