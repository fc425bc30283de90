#!/bin/bash
# usage: copy.sh BIN|pg MODE(new|existing) [disk|mem] [cpuprofile]
# prints the COPY's seconds (psql \timing) of 1M pgbench_accounts-like rows
mkdir -p /tmp/cb
[ -f /tmp/cb/acc.tsv ] || awk 'BEGIN{for(i=1;i<=1000000;i++) printf "%d\t%d\t0\t\n", i, int((i-1)/100000)+1}' > /tmp/cb/acc.tsv
BIN=$1; MODE=$2; WHERE=${3:-disk}; PROF=$4
if [ "$BIN" = pg ]; then
  PORT=5499
  psql -q "host=127.0.0.1 port=$PORT user=postgres dbname=postgres" -c 'drop table if exists acc' >/dev/null
else
  PORT=5488
  D=$(mktemp -d /tmp/cb/run.XXXX)
  DATA="--data $D/db"; [ "$WHERE" = mem ] && DATA=""
  PF=""; [ -n "$PROF" ] && PF="--cpuprofile $PROF"
  $BIN serve $DATA --listen 127.0.0.1:$PORT $PF > $D/log 2>&1 &
  P=$!
  for i in $(seq 100); do pg_isready -q -h 127.0.0.1 -p $PORT && break; sleep 0.1; done
fi
DDL="create table acc (aid int primary key, bid int, abalance int, filler char(84))"
if [ "$MODE" = new ]; then
  SCRIPT="begin;
$DDL;
\\timing on
\\copy acc from '/tmp/cb/acc.tsv'
\\timing off
commit;"
else
  SCRIPT="$DDL;
\\timing on
\\copy acc from '/tmp/cb/acc.tsv'
\\timing off"
fi
out=$(echo "$SCRIPT" | psql -q -X -v ON_ERROR_STOP=1 "host=127.0.0.1 port=$PORT user=postgres dbname=postgres" 2>&1)
echo "$(basename $BIN) $MODE $WHERE $(echo "$out" | grep -o 'Time: [0-9.]* ms' | tr '\n' ' ') $(echo "$out" | grep -i error)"
if [ "$BIN" != pg ]; then kill -INT $P; wait $P 2>/dev/null; rm -rf $D; fi
