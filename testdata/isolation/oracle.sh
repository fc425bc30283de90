#!/bin/bash
# Regenerates expected/*.out: each spec run by PostgreSQL's isolationtester
# against a throw-away PostgreSQL 15 (deadlock_timeout 1s), then the same
# spec against tupled serve (deadlock timeout 1s), printing any difference.
# The Go test (pgwire TestIsolationSpecs) checks tupled against these files.
#
#   testdata/isolation/oracle.sh [SPEC...]     (as root: PostgreSQL runs as postgres)
set -euo pipefail
cd "$(dirname "$0")"
PGBIN=/usr/lib/postgresql/15/bin
ISO=/usr/lib/postgresql/15/lib/pgxs/src/test/isolation/isolationtester
export PG_TEST_TIMEOUT_DEFAULT=${PG_TEST_TIMEOUT_DEFAULT:-10}  # isolationtester cancels a step stuck for twice this
PGPORT=${PGPORT:-5479}
TPORT=${TPORT:-5480}
for f in "$PGBIN/initdb" "$PGBIN/pg_ctl" "$ISO"; do
  [ -x "$f" ] || { echo "oracle.sh: $f missing (apt-get install postgresql-15 postgresql-server-dev-15)" >&2; exit 1; }
done
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(*.spec)

D=$(mktemp -d); chown postgres "$D"
runuser -u postgres -- "$PGBIN/initdb" -D "$D/data" -A trust -U postgres >/dev/null
runuser -u postgres -- "$PGBIN/pg_ctl" -D "$D/data" -l "$D/log" -w \
  -o "-c port=$PGPORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$D -c deadlock_timeout=1s" start >/dev/null
(cd ../.. && go build -o "$D/tupled" ./cmd/tupled)
"$D/tupled" serve --listen "127.0.0.1:$TPORT" --deadlock-timeout 1s --log-level warn >/dev/null 2>"$D/tupled.log" &
TPID=$!
trap 'kill $TPID 2>/dev/null; runuser -u postgres -- "$PGBIN/pg_ctl" -D "$D/data" stop -m fast >/dev/null; rm -rf "$D"' EXIT
sleep 1

mkdir -p expected
status=0
for spec in "${specs[@]}"; do
  name=$(basename "$spec" .spec)
  "$ISO" "host=127.0.0.1 port=$PGPORT user=postgres dbname=postgres" < "$spec" > "expected/$name.out" 2>&1 || true
  "$ISO" "host=127.0.0.1 port=$TPORT user=postgres dbname=postgres" < "$spec" > "$D/$name.out" 2>&1 || true
  if diff -u "expected/$name.out" "$D/$name.out" > "$D/$name.diff"; then
    echo "ok    $name"
  else
    echo "DIFF  $name"; cat "$D/$name.diff"; status=1
  fi
done
exit $status
