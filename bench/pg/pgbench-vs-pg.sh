#!/usr/bin/env bash
# pgbench -i -s 10, then -b tpcb-like and -b select-only at 30 clients
# (-M prepared, -T 8), tupled serve on disk beside PostgreSQL 15, both
# durable (fsync, synchronous commit), in alternated rounds (issue 24's
# pgbench goal). Usage, from the repository root:
#   PGCONN="host=127.0.0.1 port=5499 user=postgres dbname=postgres" bench/pg/pgbench-vs-pg.sh [rounds]
# PGCONN names a running PostgreSQL 15 (the script makes and uses a
# database "bench" there); tupled is built and served on a free port.
set -euo pipefail
rounds=${1:-3}
: "${PGCONN:?set PGCONN to a PostgreSQL 15 connection string}"
D=$(mktemp -d /tmp/pgbench-vs-pg.XXXX)
trap 'kill $tpid 2>/dev/null; rm -rf "$D"' EXIT
go build -o "$D/tupled" ./cmd/tupled
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$D/tupled" serve --listen 127.0.0.1:$port --data "$D/data" >"$D/serve.log" 2>&1 &
tpid=$!
for i in $(seq 50); do psql "host=127.0.0.1 port=$port user=t dbname=t sslmode=disable" -Atc 'select 1' >/dev/null 2>&1 && break; sleep 0.1; done
TU="host=127.0.0.1 port=$port user=t dbname=t sslmode=disable"
psql "$PGCONN" -qc "drop database if exists bench" -c "create database bench"
PG="$PGCONN dbname=bench"
pgbench -i -s 10 -q "$TU"
pgbench -i -s 10 -q "$PG"
for r in $(seq "$rounds"); do
  for b in tpcb-like select-only; do
    for sys in tupled postgres; do
      if [ $sys = tupled ]; then C="$TU"; else C="$PG"; fi
      echo "$r $b $sys $(pgbench -n -b $b -M prepared -c 30 -j 2 -T 8 "$C" 2>&1 | grep -E '^tps|failed' | tr '\n' ' ')"
    done
  done
done
