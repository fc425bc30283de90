#!/bin/bash
# usage: pgbi.sh BIN|pg [cpuprofile] -> pgbench -i -s 10's own step times
BIN=$1; PROF=$2
mkdir -p /tmp/cb
if [ "$BIN" = pg ]; then PORT=5499; else
PORT=5488
D=$(mktemp -d /tmp/cb/pgbi.XXXX)
PF=""; [ -n "$PROF" ] && PF="--cpuprofile $PROF"
$BIN serve --data $D/db --listen 127.0.0.1:$PORT $PF > $D/log 2>&1 &
P=$!
for i in $(seq 100); do pg_isready -q -h 127.0.0.1 -p $PORT && break; sleep 0.1; done
fi
out=$(pgbench -i -s 10 -h 127.0.0.1 -p $PORT -U postgres postgres 2>&1)
echo "$(basename $BIN) rc=$? $(echo "$out" | grep -o 'done in.*')"
if [ "$BIN" != pg ]; then kill -INT $P; wait $P 2>/dev/null; rm -rf $D; fi
