#!/usr/bin/env bash
# pgbench -i -s 10, then -b tpcb-like and -b select-only at 30 clients
# (-M prepared, -T 8), tupled serve on disk beside PostgreSQL 15, both
# durable (fsync, synchronous commit), in alternated rounds (issue 24's
# pgbench goal). Beside each tps: the CPU each transaction cost the
# pgbench client and the server (user+system, from /proc: tupled's process,
# PostgreSQL's postmaster's reaped backends), which bound what any server
# could reach on these cores. Usage, from the repository root:
#   PGCONN="host=127.0.0.1 port=5499 user=postgres dbname=postgres" PGPID=<postmaster pid> bench/pg/pgbench-vs-pg.sh [rounds]
# PGCONN names a running PostgreSQL 15 (the script makes and uses a
# database "bench" there); PGPID (optional) its postmaster, for its CPU.
set -euo pipefail
rounds=${1:-3}
. bench/pg/lib.sh
bench_start pgbench-vs-pg bench
pgbench -i -s 10 -q "$TU"
pgbench -i -s 10 -q "$PG"
hz=$(getconf CLK_TCK)
cpu_of() { # utime+stime+cutime+cstime of a process, in ticks
  if [ -n "$1" ] && [ -r /proc/$1/stat ]; then awk '{print $14+$15+$16+$17}' /proc/$1/stat; else echo 0; fi
}
for r in $(seq "$rounds"); do
  for b in tpcb-like select-only; do
    for sys in tupled postgres; do
      if [ $sys = tupled ]; then spid=$tpid; else spid=${PGPID:-}; fi
      s0=$(cpu_of "$spid")
      out=$( { /usr/bin/time -f "CPU %U %S" pgbench -n -b $b -M prepared -c 30 -j 2 -T 8 "$(conn_of $sys)"; } 2>&1 )
      sleep 1 # PostgreSQL's backends are reaped (and their CPU counted) after they exit
      s1=$(cpu_of "$spid")
      tx=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
      client=$(echo "$out" | awk -v tx="$tx" '/^CPU/{printf "%.1f", ($2+$3)*1e6/tx}')
      server=$(awk -v d=$((s1 - s0)) -v hz="$hz" -v tx="$tx" 'BEGIN{printf "%.1f", d*1e6/hz/tx}')
      echo "$r $b $sys $(echo "$out" | grep -E '^tps|failed' | tr '\n' ' ') client_us/tx=$client server_us/tx=$server"
    done
  done
done
