#!/usr/bin/env python3
"""Print PostgreSQL's figures next to tupled's (bench/pg/run.sh's last step).

Input: a results file, one run per line, tab-separated:

    pg      WORKLOAD VARIANT PGBENCH_LOG FSYNCS ROWS   a pgbench run on PostgreSQL
    serve   WORKLOAD VARIANT PGBENCH_LOG -      ROWS   a pgbench run on `tupled serve`
    tupled  WORKLOAD JSON                              `tupled bench --json` (embedded)
    note    WORKLOAD TEXT                              printed under the workload's table

For every workload it prints one table: each variant's tps on both sides,
tupled/PostgreSQL, and each side's ratio to its own baseline (the headline:
the ratios are comparable, the absolute tps only partly, see README.md).
"""

import json
import re
import sys

BASELINE = {"forshare": "plain", "hotrow": "plain", "storm": "off"}
# The headline ratio of each workload (goal ids of issue 4).
HEADLINE = {
    "forshare": ("share", "plain", "P1"),
    "hotrow": ("keyshare", "plain", "P4"),
    "storm": ("default", "off", "P5"),
}
PG_LABEL = {
    "storm": {
        "default": "PostgreSQL: deadlock_timeout={storm_dt} (its classic detector)",
        "off": "PostgreSQL: deadlock_timeout={off_dt} (approximates off)",
    }
}


def parse_pgbench(path):
    """tps, transactions, failures, average latency (ms) and seconds with zero
    tps (from the -P 1 progress lines) of one pgbench log."""
    r = {"tps": None, "n": 0, "failed": 0, "lat": None, "zero": 0, "error": None}
    started = False
    r["progress"] = []
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError as e:
        r["error"] = str(e)
        return r
    for line in text.splitlines():
        m = re.match(r"tps = ([0-9.]+)", line)
        if m:
            r["tps"] = float(m.group(1))
        m = re.match(r"number of transactions actually processed: (\d+)", line)
        if m:
            r["n"] = int(m.group(1))
        m = re.match(r"number of failed transactions: (\d+)", line)
        if m:
            r["failed"] = int(m.group(1))
        m = re.match(r"latency average = ([0-9.]+) ms", line)
        if m:
            r["lat"] = float(m.group(1))
        # Seconds without a commit, once the first commit happened (before
        # it, pgbench is still connecting its clients).
        m = re.match(r"progress: ([0-9.]+) s, ([0-9.]+) tps", line)
        if m:
            r["progress"].append((float(m.group(1)), float(m.group(2))))
            if float(m.group(2)) > 0:
                started = True
            elif started:
                r["zero"] += 1
        if "aborted" in line or line.startswith("pgbench: error") or line.startswith("pgbench: fatal"):
            r["error"] = r["error"] or line.strip()
    if r["tps"] is None and r["error"] is None:
        r["error"] = "no tps line in " + path
    return r


def window_tps(progress, seconds):
    """Mean tps over the first `seconds` of the -P 1 progress lines, from the
    interval of the first commit on. pgbench's -T clock includes connecting
    (about 35 s for 1000 clients here) and its run ends only when the last
    in-flight transaction does; this is the steady part in between."""
    prev, t0, num, den = None, None, 0.0, 0.0
    for t, tps in progress:
        if prev is None:
            prev = t - 1.0  # -P 1
        if t0 is None and tps > 0:
            t0 = prev
        if t0 is not None and t <= t0 + seconds + 0.5:
            num += tps * (t - prev)
            den += t - prev
        prev = t
    return num / den if den > 0 else None


def fmt(v, spec):
    if v is None:
        width = re.match(r"\d*", spec).group(0)
        return "-".rjust(int(width or 0))
    return format(v, spec)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: table.py RESULTS [key=value ...]")
    params = dict(a.split("=", 1) for a in sys.argv[2:])
    other = params.get("tupled_side", "tupled")
    workloads = []  # in order of first appearance
    pg, tup, notes = {}, {}, {}
    for line in open(sys.argv[1], encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if len(f) < 3:
            continue
        side, w = f[0], f[1]
        if w not in workloads:
            workloads.append(w)
        pg.setdefault(w, {})
        tup.setdefault(w, {})
        notes.setdefault(w, [])
        if side in ("pg", "serve"):
            variant, log = f[2], f[3]
            r = parse_pgbench(log)
            fs = f[4] if len(f) > 4 else "-"
            rows = int(f[5]) if len(f) > 5 and f[5] not in ("", "-") else 0
            r["fsync"] = (int(fs) / r["n"]) if fs not in ("", "-") and r["n"] else None
            if w == "manyrows" and r["lat"]:
                r["metric"] = rows / (r["lat"] / 1000.0)
            elif w == "storm" and "duration" in params:
                r["metric"] = window_tps(r["progress"], float(params["duration"]))
                r["summary_tps"] = r["tps"]
            else:
                r["metric"] = r["tps"]
            if r["error"]:
                notes[w].append(f"{side} {variant}: {r['error']}")
            (pg if side == "pg" else tup)[w][variant] = r
        elif side == "tupled":
            try:
                rep = json.load(open(f[2], encoding="utf-8"))
            except (OSError, ValueError) as e:
                notes[w].append(f"tupled: cannot read {f[2]}: {e}")
                continue
            for res in rep.get("results", []):
                ex = res.get("extra") or {}
                fsync = ex.get("WAL fsyncs per transaction", ex.get("WAL fsyncs per commit"))
                metric = res.get("tps")
                if w == "manyrows":
                    metric = ex.get("rows locked per second", metric)
                tup[w][res["variant"]] = {
                    "tps": res.get("tps"),
                    "metric": metric,
                    "failed": sum((res.get("failures_by_sqlstate") or {}).values()),
                    "zero": res.get("seconds_with_zero_tps"),
                    "fsync": fsync,
                    "n": res.get("transactions"),
                }
            for x in rep.get("ratios") or []:
                if x.get("baseline", "").endswith("/fastpath-off"):
                    notes[w].append(
                        f"tupled {x['variant']} fast path on / off = {x['tps_ratio']:.3f}"
                        " (P2; PostgreSQL has no such switch)"
                    )
        elif side == "note":
            notes[w].append(f[2])

    for w in workloads:
        P, T = pg[w], tup[w]
        metric = "rows/s" if w == "manyrows" else "tps"
        print()
        print(f"== {w}: PostgreSQL 15 vs {other} ({metric})")
        order = list(P) + [v for v in T if v not in P]
        base = BASELINE.get(w)
        hdr = (
            f"{'variant':<24} {'PG ' + metric:>11} {other + ' ' + metric:>16} {other[:6] + '/PG':>10}"
            f" {'PG /' + (base or '-'):>9} {other[:6] + ' /' + (base or '-'):>13}"
            f" {'PG fail':>8} {other[:6] + ' fail':>11} {'PG 0s':>6} {other[:6] + ' 0s':>9}"
            f" {'PG fsync/tx':>11} {other[:6] + ' fsync/tx':>15}"
        )
        print(hdr)
        for v in order:
            p, t = P.get(v, {}), T.get(v, {})
            pb = P.get(base, {}).get("metric") if base else None
            tb = T.get(base, {}).get("metric") if base else None
            print(
                f"{v:<24} {fmt(p.get('metric'), '11.1f')} {fmt(t.get('metric'), '16.1f')}"
                f" {fmt(ratio(t.get('metric'), p.get('metric')), '10.2f')}"
                f" {fmt(ratio(p.get('metric'), pb), '9.3f')} {fmt(ratio(t.get('metric'), tb), '13.3f')}"
                f" {fmt(p.get('failed') if p else None, '8d')} {fmt(t.get('failed') if t else None, '11d')}"
                f" {fmt(p.get('zero') if p else None, '6d')} {fmt(t.get('zero') if t else None, '9d')}"
                f" {fmt(p.get('fsync'), '11.3f')} {fmt(t.get('fsync'), '15.3f')}"
            )
        for v, lbl in PG_LABEL.get(w, {}).items():
            if v in P:
                print(f"  {v}: " + lbl.format(**{k: params.get(k, "?") for k in ("storm_dt", "off_dt")}))
        for v in order:
            for side, d in (("PG", P), (other, T)):
                if "summary_tps" in d.get(v, {}):
                    print(f"  {side} {v}: tps over the first {params['duration']} s after the first commit"
                          f" (progress lines); pgbench's own figure: {fmt(d[v]['summary_tps'], '.1f')}")
        if w in HEADLINE:
            a, b, gid = HEADLINE[w]
            pr = ratio(P.get(a, {}).get("metric"), P.get(b, {}).get("metric"))
            tr = ratio(T.get(a, {}).get("metric"), T.get(b, {}).get("metric"))
            print(f"headline {gid}: {a}/{b}: PostgreSQL {fmt(pr, '.3f')}, {other} {fmt(tr, '.3f')}")
        for n in notes[w]:
            print("note: " + n)


if __name__ == "__main__":
    main()
