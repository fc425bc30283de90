#!/usr/bin/env bash
# A join of two 100k-row tables on a key (issue 24's join goal: ≥ 0.5×
# PostgreSQL 15's speed), tupled serve on disk beside PostgreSQL 15, in
# alternated rounds. Two queries, each one pgbench transaction of one
# client (-M prepared, -T 8): an aggregate over the join (no rows sent)
# and the join's 100k rows sent to the client. Usage, from the repository
# root:
#   PGCONN="host=127.0.0.1 port=5499 user=postgres dbname=postgres" bench/pg/join-vs-pg.sh [rounds]
set -euo pipefail
rounds=${1:-3}
. bench/pg/lib.sh
bench_start join-vs-pg benchjoin
setup="CREATE TABLE ja (id int PRIMARY KEY, v int, pad text);
CREATE TABLE jb (id int PRIMARY KEY, a_id int, w int);
INSERT INTO ja SELECT i, i % 1000, 'pad' || i FROM generate_series(1, 100000) i;
INSERT INTO jb SELECT i, (i * 7919) % 100000 + 1, i % 100 FROM generate_series(1, 100000) i;
ANALYZE ja; ANALYZE jb;"
psql "$TU" -q -v ON_ERROR_STOP=1 -c "$setup" >/dev/null
psql "$PG" -q -v ON_ERROR_STOP=1 -c "$setup" >/dev/null
echo 'SELECT count(*), sum(ja.v + jb.w) FROM ja JOIN jb ON ja.id = jb.a_id;' > "$D/agg.sql"
echo 'SELECT ja.id, ja.v, jb.w FROM ja JOIN jb ON ja.id = jb.a_id;' > "$D/rows.sql"
for sys in tupled postgres; do
  echo "check $sys: $(psql "$(conn_of $sys)" -Atf "$D/agg.sql")"
done
for r in $(seq "$rounds"); do
  for q in agg rows; do
    for sys in tupled postgres; do
      echo "$r $q $sys $(pgbench -n -f "$D/$q.sql" -M prepared -c 1 -T 8 "$(conn_of $sys)" 2>&1 | grep -E '^tps|failed' | tr '\n' ' ')"
    done
  done
done
