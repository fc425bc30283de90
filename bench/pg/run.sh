#!/usr/bin/env bash
# bench/pg/run.sh: the seed workloads on a throw-away PostgreSQL 15 and on
# tupled, side by side, in one run. See bench/pg/README.md.
#
#   bench/pg/run.sh forshare [-c 30] [-T 10]
#   bench/pg/run.sh storm            # 1000 clients, deadlock_timeout 10ms vs 100s
#   bench/pg/run.sh all
#   bench/pg/run.sh hotrow --target tupled-serve 127.0.0.1:5433
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bench/pg/run.sh WORKLOAD|all [options]

workloads: forshare hotrow storm tpcb-like manyrows (all: every one, in that order)

  -c N                  clients (default: forshare/hotrow/tpcb-like 30, storm 1000, manyrows 1)
  -T SECONDS            duration of each variant (default 10)
  -s SCALE              forshare's pgbench scale (default 10: 1M accounts)
  --variants LIST       comma-separated variants to run (default: the workload's)
  --sync-commit on|off  synchronous_commit / tupled --sync-commit (default on)
  --hot-rows N          hotrow: parent rows (default 1); storm: hot rows (default 10)
  --ins-keys N          storm: contended insert keys (default 10)
  --storm-dt DUR        storm "default": deadlock_timeout (default 10ms)
  --off-dt DUR          storm "off": PostgreSQL's deadlock_timeout standing for off (default 100s)
  --share-fastpath on|off|both   forshare: passed to tupled bench (P2; default on)
  --tpcb-scale N        tpcb-like scale (default 1, tupled's default)
  --manyrows-scale N    manyrows scale (default 100: 10M rows)
  --connect-allow S     storm: seconds added to pgbench's -T for connecting the
                        clients (default clients/25: 40 s for 1000)
  --target embedded     tupled side: `tupled bench` on the embedded engine (default)
  --target tupled-serve HOST:PORT
                        tupled side: the same pgbench scripts against a running
                        `tupled serve` at HOST:PORT
  --pg-only             PostgreSQL only
  --results FILE        also keep the raw results (TSV + logs are in the temp dir)
  --keep                keep the temp dir (cluster, logs, JSON) after the run
EOF
}

die() {
	echo "run.sh: $*" >&2
	exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

workload=""
clients=""
duration=10
scale=10
variants=""
sync_commit=on
hot_rows=""
ins_keys=10
storm_dt=10ms
off_dt=100s
share_fastpath=on
tpcb_scale=1
manyrows_scale=100
connect_allow=""
target=embedded
serve_addr=""
pg_only=0
keep=0
results_copy=""

[ $# -gt 0 ] || {
	usage
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help)
		usage
		exit 0
		;;
	-c) clients=${2:?-c needs a value}; shift 2 ;;
	-T) duration=${2:?-T needs a value}; shift 2 ;;
	-s) scale=${2:?-s needs a value}; shift 2 ;;
	--variants) variants=${2:?}; shift 2 ;;
	--sync-commit) sync_commit=${2:?}; shift 2 ;;
	--hot-rows) hot_rows=${2:?}; shift 2 ;;
	--ins-keys) ins_keys=${2:?}; shift 2 ;;
	--storm-dt) storm_dt=${2:?}; shift 2 ;;
	--off-dt) off_dt=${2:?}; shift 2 ;;
	--share-fastpath) share_fastpath=${2:?}; shift 2 ;;
	--tpcb-scale) tpcb_scale=${2:?}; shift 2 ;;
	--manyrows-scale) manyrows_scale=${2:?}; shift 2 ;;
	--connect-allow) connect_allow=${2:?}; shift 2 ;;
	--target)
		target=${2:?--target needs embedded or tupled-serve}
		shift 2
		if [ "$target" = tupled-serve ]; then
			serve_addr=${1:-}
			[[ "$serve_addr" == *:* ]] || die "--target tupled-serve needs HOST:PORT"
			shift
		elif [ "$target" != embedded ]; then
			die "--target must be embedded or tupled-serve HOST:PORT"
		fi
		;;
	--pg-only) pg_only=1; shift ;;
	--keep) keep=1; shift ;;
	--results) results_copy=${2:?}; shift 2 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*)
		[ -z "$workload" ] || die "one workload only (or all)"
		workload=$1
		shift
		;;
	esac
done

case "$workload" in
all) workloads=(forshare hotrow storm tpcb-like manyrows) ;;
forshare | hotrow | storm | tpcb-like | manyrows) workloads=("$workload") ;;
*) die "unknown workload '$workload' (forshare hotrow storm tpcb-like manyrows all)" ;;
esac
case "$sync_commit" in on | off) ;; *) die "--sync-commit on or off" ;; esac
[[ "$duration" =~ ^[0-9]+$ ]] || die "-T wants whole seconds"

# --- tools -------------------------------------------------------------------
pgbin=/usr/lib/postgresql/15/bin
[ -x "$pgbin/initdb" ] || pgbin=$(dirname "$(command -v initdb || echo /nonexistent/initdb)")
for t in "$pgbin/initdb" "$pgbin/pg_ctl"; do
	[ -x "$t" ] || die "PostgreSQL 15 server binaries not found (looked in /usr/lib/postgresql/15/bin and PATH)"
done
for t in pgbench psql python3; do
	command -v "$t" >/dev/null || die "$t not found"
done

as_pg() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# --- the throw-away cluster --------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tupled-pgbench.XXXXXX")
results=$tmp/results.tsv
: >"$results"
[ "$(id -u)" != 0 ] || chown postgres "$tmp"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
pg_started=0

cleanup() {
	local rc=$?
	if [ "$pg_started" = 1 ]; then
		as_pg "$pgbin/pg_ctl" -D "$tmp/data" stop -m fast >/dev/null 2>&1 || true
	fi
	if [ -n "$results_copy" ] && [ -f "$results" ]; then
		cp "$results" "$results_copy" || true
	fi
	if [ "$keep" = 1 ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== PostgreSQL 15 in $tmp on 127.0.0.1:$port (synchronous_commit=$sync_commit)" >&2
as_pg "$pgbin/initdb" -D "$tmp/data" -A trust -U postgres >"$tmp/initdb.log" 2>&1 ||
	{ cat "$tmp/initdb.log" >&2; die "initdb failed"; }
cat >>"$tmp/data/postgresql.conf" <<EOF
# bench/pg/run.sh
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$tmp'
max_connections = 1100
shared_buffers = 2GB
fsync = on
synchronous_commit = $sync_commit
full_page_writes = on
max_wal_size = 8GB
checkpoint_timeout = 30min
deadlock_timeout = 1s
log_min_messages = warning
EOF
pg_started=1
as_pg "$pgbin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 60 start >/dev/null ||
	{ tail -20 "$tmp/server.log" >&2; die "PostgreSQL did not start (log above)"; }

pg_env=(env PGHOST=127.0.0.1 "PGPORT=$port" PGUSER=postgres PGDATABASE=postgres)
serve_env=()
if [ "$target" = tupled-serve ]; then
	serve_env=(env "PGHOST=${serve_addr%:*}" "PGPORT=${serve_addr##*:}"
		"PGUSER=${TUPLED_USER:-postgres}" "PGDATABASE=${TUPLED_DB:-tupled}")
	pg_isready -q -h "${serve_addr%:*}" -p "${serve_addr##*:}" ||
		die "no tupled server answers at $serve_addr (start one with: go run ./cmd/tupled serve --listen $serve_addr --data DIR)"
fi

# psql_on SIDE ARGS...: psql against PostgreSQL (pg) or the tupled server (serve).
psql_on() {
	local side=$1
	shift
	if [ "$side" = pg ]; then
		"${pg_env[@]}" PGOPTIONS='-c client_min_messages=warning' psql -X -q -v ON_ERROR_STOP=1 "$@"
	else
		"${serve_env[@]}" psql -X -q -v ON_ERROR_STOP=1 "$@"
	fi
}

wal_syncs() {
	psql_on pg -At -c 'SELECT wal_sync FROM pg_stat_wal'
}

# rows_sql TABLE FIRSTCOL N EXTRA: INSERT statements for rows 1..N, 1000 a statement.
rows_sql() {
	awk -v t="$1" -v cols="$2" -v n="$3" -v extra="$4" 'BEGIN {
		for (i = 1; i <= n; i += 1000) {
			printf "INSERT INTO %s (%s) VALUES ", t, cols
			for (j = i; j < i + 1000 && j <= n; j++)
				printf "%s(%d%s)", (j > i ? "," : ""), j, extra
			print ";"
		}
	}'
}

# setup_accounts SIDE SCALE: pgbench_accounts (and the other pgbench tables)
# of SCALE. PostgreSQL: pgbench -i, as in the seed. tupled serve: the same
# table in portable SQL (pgbench -i uses COPY and storage options).
setup_accounts() {
	local side=$1 s=$2
	echo "-- $side: pgbench tables at scale $s" >&2
	if [ "$side" = pg ]; then
		"${pg_env[@]}" pgbench -i -q -s "$s" >"$tmp/init-$s.log" 2>&1 ||
			{ tail -5 "$tmp/init-$s.log" >&2; die "pgbench -i -s $s failed"; }
	else
		{
			echo "DROP TABLE IF EXISTS pgbench_accounts;"
			echo "CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int NOT NULL, abalance int NOT NULL, filler text);"
			rows_sql pgbench_accounts aid,bid,abalance "$((s * 100000))" ",1,0"
		} | psql_on serve >/dev/null
	fi
}

# setup_small SIDE WORKLOAD TABLE N: a workload's portable setup SQL and rows 1..N.
setup_small() {
	local side=$1 w=$2 table=$3 n=$4
	{
		cat "$here/$w-setup.sql"
		rows_sql "$table" id,v "$n" ",0"
	} | psql_on "$side" >/dev/null
}

# pgbench_run SIDE WORKLOAD VARIANT CLIENTS ROWS PGOPTS -- PGBENCH ARGS...
# runs pgbench, shows its progress, records the log in the results.
pgbench_run() {
	local side=$1 w=$2 v=$3 c=$4 rows=$5 pgopts=$6
	shift 7
	local log="$tmp/$side-$w-$v.log" before="-" after fs="-"
	local -a envv
	if [ "$side" = pg ]; then
		envv=("${pg_env[@]}" "PGOPTIONS=$pgopts")
		before=$(wal_syncs)
	else
		envv=("${serve_env[@]}")
	fi
	echo "-- $side: $w/$v: pgbench -c $c -j $c $*" >&2
	set +e
	"${envv[@]}" pgbench -n -M prepared -c "$c" -j "$c" -P 1 --failures-detailed "$@" 2>&1 |
		tee "$log" | grep --line-buffered -E '^(progress|tps|initial connection|number of failed|pgbench: error|.*aborted)' >&2
	set -e
	if [ "$side" = pg ]; then
		sleep 1 # backends report their WAL statistics when they exit
		after=$(wal_syncs)
		fs=$((after - before))
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$side" "$w" "$v" "$log" "$fs" "$rows" >>"$results"
}

note() { printf 'note\t%s\t%s\n' "$1" "$2" >>"$results"; echo "-- note: $2" >&2; }

selected() { # selected WORKLOAD DEFAULTS...: the variants to run
	local w=$1
	shift
	if [ -n "$variants" ]; then
		tr ',' ' ' <<<"$variants"
	else
		echo "$@"
	fi
}

# run_side SIDE WORKLOAD: one workload's pgbench runs on PostgreSQL or on tupled serve.
run_side() {
	local side=$1 w=$2 c v
	local -a common=(-T "$duration")
	case "$w" in
	forshare)
		c=${clients:-30}
		setup_accounts "$side" "$scale"
		for v in $(selected "$w" plain keyshare share nokeyupdate update); do
			pgbench_run "$side" "$w" "$v" "$c" - "" -- "${common[@]}" -s "$scale" -f "$here/forshare-$v.sql"
		done
		;;
	hotrow)
		c=${clients:-30}
		local hr=${hot_rows:-1}
		setup_small "$side" hotrow hotrow_parent "$hr"
		for v in $(selected "$w" plain keyshare); do
			pgbench_run "$side" "$w" "$v" "$c" - "" -- "${common[@]}" -D "hot_rows=$hr" -f "$here/hotrow-$v.sql"
		done
		;;
	storm)
		c=${clients:-1000}
		local hr=${hot_rows:-10} dt
		# pgbench's -T clock includes connecting, and PostgreSQL needs about
		# 35 s to start 1000 backends on this machine: allow for it, so that
		# about -T seconds are measured (tps excludes the connection time).
		common=(-T "$((duration + ${connect_allow:-$((c / 25))}))")
		for v in $(selected "$w" default off); do
			case "$v" in
			default) dt=$storm_dt ;;
			off) dt=$off_dt ;;
			*) die "storm variants on PostgreSQL: default, off" ;;
			esac
			if [ "$side" = serve ]; then
				[ "$v" = default ] || continue
				note "$w" "tupled serve: its deadlock timeout is the one it was started with (--deadlock-timeout); run it twice to compare"
			fi
			setup_small "$side" storm storm_hot "$hr" # a fresh table each time
			pgbench_run "$side" "$w" "$v" "$c" - "-c deadlock_timeout=$dt" -- "${common[@]}" \
				-D "hot_rows=$hr" -D "ins_keys=$ins_keys" \
				-f "$here/storm-update.sql@1" -f "$here/storm-insert.sql@1"
		done
		;;
	tpcb-like)
		c=${clients:-30}
		if [ "$side" = serve ]; then
			note "$w" "not run on tupled serve: pgbench_history has no primary key there and CURRENT_TIMESTAMP/timestamp columns are outside its SQL subset"
			return 0
		fi
		setup_accounts "$side" "$tpcb_scale"
		pgbench_run "$side" "$w" tpcb "$c" - "" -- "${common[@]}" -s "$tpcb_scale" -f "$here/tpcb-like.sql"
		;;
	manyrows)
		c=${clients:-1}
		if [ "$side" = serve ]; then
			note "$w" "not run on tupled serve: count(*) is outside its SQL subset"
			return 0
		fi
		local rows=$((manyrows_scale * 100000))
		setup_accounts "$side" "$manyrows_scale"
		pgbench_run "$side" "$w" share "$c" "$rows" "" -- -t 1 -D "rows=$rows" -f "$here/manyrows.sql"
		;;
	esac
}

# run_embedded WORKLOAD: tupled bench on the embedded engine, --json into the results.
tupled_bin=""
run_embedded() {
	local w=$1 c json out
	local -a args=(-T "$duration" -P 1 "--sync-commit=$sync_commit" --data "$tmp/tupled-$w")
	if [ -z "$tupled_bin" ]; then
		echo "-- building cmd/tupled" >&2
		if ! (cd "$repo" && go build -o "$tmp/tupled" ./cmd/tupled) >"$tmp/build.log" 2>&1; then
			note "$w" "tupled side skipped: go build ./cmd/tupled failed: $(head -3 "$tmp/build.log" | tr '\n\t' '  ')"
			return 0
		fi
		tupled_bin=$tmp/tupled
	fi
	[ -z "$variants" ] || args+=(--variants "$variants")
	case "$w" in
	forshare)
		c=${clients:-30}
		# One round of every variant, PostgreSQL measured here, not by tupled bench.
		args+=(-s "$((scale * 100000))" --share-fastpath "$share_fastpath" --rounds 1 --pg off)
		if [ -z "$variants" ]; then
			local locks=(keyshare share nokeyupdate update) vs=(plain) l
			for l in "${locks[@]}"; do
				[ "$share_fastpath" = off ] || vs+=("$l")
			done
			for l in "${locks[@]}"; do
				[ "$share_fastpath" = on ] || vs+=("$l/fastpath-off")
			done
			args+=(--variants "$(IFS=,; echo "${vs[*]}")")
		fi
		;;
	hotrow) c=${clients:-30}; args+=(--hot-rows "${hot_rows:-1}") ;;
	storm) c=${clients:-1000}; args+=(--hot-rows "${hot_rows:-10}" --deadlock-timeout "$storm_dt") ;;
	tpcb-like) c=${clients:-30}; args+=(-s "$((tpcb_scale * 100000))") ;;
	manyrows) c=${clients:-1}; args+=(-s "$((manyrows_scale * 100000))") ;;
	esac
	json=$tmp/tupled-$w.json
	echo "-- tupled: tupled bench $w -c $c ${args[*]} --json $json" >&2
	set +e
	"$tupled_bin" bench "$w" -c "$c" "${args[@]}" --json "$json" >"$tmp/tupled-$w.log" 2>&1
	local rc=$?
	set -e
	grep -E '^(==|progress|tps =|number of failed)' "$tmp/tupled-$w.log" >&2 || true
	if [ "$rc" != 0 ]; then
		out=$(grep -m1 -E '^tupled|unknown workload|error' "$tmp/tupled-$w.log" || tail -1 "$tmp/tupled-$w.log")
		if grep -q 'unknown workload' "$tmp/tupled-$w.log"; then
			note "$w" "tupled side skipped: 'tupled bench $w' does not exist yet in bench.Workloads() ($out)"
		else
			note "$w" "tupled side failed (exit $rc): $out"
		fi
		return 0
	fi
	printf 'tupled\t%s\t%s\n' "$w" "$json" >>"$results"
}

for w in "${workloads[@]}"; do
	echo "==== $w" >&2
	run_side pg "$w"
	if [ "$pg_only" = 1 ]; then
		continue
	elif [ "$target" = tupled-serve ]; then
		run_side serve "$w"
	else
		run_embedded "$w"
	fi
done

side_label=tupled
[ "$target" != tupled-serve ] || side_label=tupled-serve
echo
echo "PostgreSQL 15 vs $side_label: $(nproc) cores, -T $duration, synchronous_commit=$sync_commit, $(date -u +%Y-%m-%dT%H:%MZ)"
python3 "$here/table.py" "$results" "tupled_side=$side_label" "storm_dt=$storm_dt" "off_dt=$off_dt" "duration=$duration"
