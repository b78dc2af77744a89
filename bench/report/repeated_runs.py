#!/usr/bin/env python3
"""Tables of the repeated runs (throughput runs 7 to 10, backlog run 6) for docs/benchmarks.md.

Usage:
    python3 bench/report/repeated_runs.py                            # print the tables
    python3 bench/report/repeated_runs.py --write docs/benchmarks.md # replace them in the page

With --write, the text between the lines `<!-- repeated-runs:begin -->` and
`<!-- repeated-runs:end -->` of the given file is replaced; nothing else in it changes.

Reads bench/results/run-7-wake-*.json, bench/results/run-8-wake-steadfast-only-*.json,
bench/results/run-9-ping-worker-*.json and bench/results/run-10-pin-*.json (written by
steadfast-bench --scenario throughput) and bench/results/run-6-backlog-rep*.json (--scenario
backlog). Per dispatcher count it gives, for each group of repetitions, the minimum, median and
maximum orchestrations/s, and, where duroxide-pg ran in the same invocation, the median
(min-max) of the per-run steadfast / duroxide-pg ratios as the bench recorded them. A median of two runs is their mean, of four the
mean of the middle two.

For runs 9 and 10, whose files also record them, it adds per build the CPU per orchestration
over the measured window (the bench process's and the `postgres` processes' milliseconds, and
the machine's busy fraction) of steadfast and, in run 9, duroxide-pg, steadfast's database work
per orchestration (transactions, rows written), and the runtime's floor: duroxide on its
in-memory SQLite provider, same trivial workload, taken over all files of the run since it does
not depend on the build.

The build each group ran is not in the JSON: `machine.git_commit` records the HEAD of the
checkout the binary was started from, not the commit it was built from (runs 7 and 8 used
binaries copied to /tmp, runs 9 and 10 binaries copied to /work/benchbin). The build commits below are those bench/analysis.md and the commit messages
of 342de08 and 51221a4 give for runs 7 and 8; for run 9, before = af9be4d (worker claim as
BEGIN/UPDATE/COMMIT, sqlx pings every pooled connection before each statement) and after =
dfa12d0 (worker claim as one autocommit statement with give-back, connections pinged only when
idle 10 s or more), as bench/analysis.md gives. Run 10 (steadfast alone) compares after =
dfa12d0 (run 9's after build) with pin = df79d33 (dfa12d0 plus c6fe502, an empty claim returns
the next visible time itself, and df79d33, migration 0004: the claim's version filter reads the
pin from the lease row), binaries /work/benchbin/after and /work/benchbin/pin as the files'
`command` records. Python 3 standard library only.
"""

import argparse
import datetime
import decimal
import glob
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "bench", "results")
BEGIN = "<!-- repeated-runs:begin -->"
END = "<!-- repeated-runs:end -->"

# (run, group label, build commit per bench/analysis.md, file pattern)
GROUPS = [
    ("7", "before", "215d126", "run-7-wake-before-rep*.json"),
    ("7", "after", "37a075c", "run-7-wake-after-rep*.json"),
    ("8", "before", "215d126", "run-8-wake-steadfast-only-before-rep*.json"),
    ("8", "after", "0ba3f08", "run-8-wake-steadfast-only-after-rep*.json"),
    ("9", "before", "af9be4d", "run-9-ping-worker-before-rep*.json"),
    ("9", "after", "dfa12d0", "run-9-ping-worker-after-rep*.json"),
    ("10", "after", "dfa12d0", "run-10-pin-after-rep*.json"),
    ("10", "pin", "df79d33", "run-10-pin-pin-rep*.json"),
]
FLOOR = "duroxide-sqlite-memory"
WORKLOADS = ["trivial", "stress"]


def load(pattern):
    files = sorted(glob.glob(os.path.join(RESULTS, pattern)))
    if not files:
        sys.exit(f"no files match bench/results/{pattern}")
    return [(os.path.basename(f), json.load(open(f))) for f in files]


def rates(run, workload, provider):
    """dispatchers -> orchestrations/s of one run."""
    rows = run["scenarios"]["throughput"][workload]["providers"].get(provider)
    if rows is None:
        return None
    return {r["dispatchers"]: r["orchestrations_per_s"] for r in rows}


def ratios(run, workload):
    rows = run["scenarios"]["throughput"][workload].get("ratios") or []
    return {r["dispatchers"]: r["orchestrations_per_s_steadfast_over_duroxide_pg"] for r in rows}


def spread(values, digits=0):
    """'median [min-max]' of a list."""
    if not values:
        return "–"
    def f(v):  # half away from zero, as the hand-written tables round
        q = decimal.Decimal(1).scaleb(-digits)
        return str(decimal.Decimal(repr(v)).quantize(q, rounding=decimal.ROUND_HALF_UP))

    med = statistics.median(values)
    return f"{f(med)} [{f(min(values))}–{f(max(values))}]"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def conditions(groups):
    rows = []
    for (run, label, build, _), files in groups:
        for name, d in files:
            m, db, t = d["machine"], d["database"], d["scenarios"]["throughput"]
            started = datetime.datetime.fromtimestamp(d["started_at_epoch_s"], datetime.timezone.utc)
            provs = ", ".join(d["providers"])
            rows.append([
                f"`{name}`",
                run,
                f"{label}: {build}",
                f"{m['git_commit']}{' (dirty)' if m.get('git_dirty') else ''}",
                started.strftime("%Y-%m-%d %H:%M"),
                provs,
                d["pool_size"],
                f"fsync {db['fsync']}, synchronous_commit {db['synchronous_commit']}, shared_buffers {db['shared_buffers']}",
                f"{t['load_average_before']} → {t['load_average_after']}",
            ])
    return table(
        ["file", "run", "build (per analysis.md)", "recorded git_commit", "started (UTC)",
         "providers", "pool", "PostgreSQL settings recorded", "load average before → after"],
        rows,
    )


def group(groups, run, label):
    """The files of one group of repetitions."""
    return next(files for g, files in groups if g[0] == run and g[1] == label)


def interleaved(groups, run, workload):
    """Runs 7 and 9: both providers in each invocation, before and after."""
    before, after = group(groups, run, "before"), group(groups, run, "after")
    ds = sorted(rates(before[0][1], workload, "steadfast"))
    rows = []
    for n in ds:
        row = [n]
        for files in (before, after):
            sf = [rates(d, workload, "steadfast")[n] for _, d in files]
            dp = [rates(d, workload, "duroxide-pg")[n] for _, d in files]
            rt = [ratios(d, workload)[n] for _, d in files]
            row += [spread(sf), spread(dp), spread(rt, 2).replace(" [", "× [")]
        rows.append(row)
    return table(
        ["dispatchers", "before: steadfast", "before: duroxide-pg", "before: ratio",
         "after: steadfast", "after: duroxide-pg", "after: ratio"],
        rows,
    )


def trivial_rows(run, provider):
    """dispatchers -> the trivial workload's row of one run."""
    rows = run["scenarios"]["throughput"]["trivial"]["providers"].get(provider) or []
    return {r["dispatchers"]: r for r in rows}


def field(files, provider, n, key, sub):
    """The values of row[key][sub] at n dispatchers over the files that recorded it."""
    out = []
    for _, d in files:
        v = (trivial_rows(d, provider).get(n) or {}).get(key)
        if v and v.get(sub) is not None:
            out.append(v[sub])
    return out


def cpu_total(files, provider, n):
    """bench process + postgres ms per orchestration, per run."""
    out = []
    for _, d in files:
        c = (trivial_rows(d, provider).get(n) or {}).get("cpu_per_orchestration")
        if c:
            out.append(c["bench_process_ms"] + c["postgres_ms"])
    return out


def cost(groups, run, label):
    """Runs 9 and 10, one build: CPU and database work per trivial orchestration (duroxide-pg's
    CPU too where it ran: run 9)."""
    files = group(groups, run, label)
    cpu, work = "cpu_per_orchestration", "database_work_per_orchestration"
    peer = any(trivial_rows(d, "duroxide-pg") for _, d in files)
    rows = []
    for n in sorted(trivial_rows(files[0][1], "steadfast")):
        row = [
            n,
            spread(field(files, "steadfast", n, cpu, "bench_process_ms"), 1),
            spread(field(files, "steadfast", n, cpu, "postgres_ms"), 1),
            spread(cpu_total(files, "steadfast", n), 1),
            spread(field(files, "steadfast", n, cpu, "machine_busy_fraction"), 2),
            spread(field(files, "steadfast", n, work, "transactions"), 1),
            spread(field(files, "steadfast", n, work, "rows_written"), 1),
        ]
        if peer:
            row += [
                spread(field(files, "duroxide-pg", n, cpu, "bench_process_ms"), 1),
                spread(field(files, "duroxide-pg", n, cpu, "postgres_ms"), 1),
                spread(field(files, "duroxide-pg", n, cpu, "machine_busy_fraction"), 2),
            ]
        rows.append(row)
    header = ["dispatchers", "steadfast: bench process ms", "steadfast: postgres ms",
              "steadfast: total ms", "steadfast: busy fraction", "steadfast: transactions",
              "steadfast: rows written"]
    if peer:
        header += ["duroxide-pg: bench process ms", "duroxide-pg: postgres ms",
                   "duroxide-pg: busy fraction"]
    return table(header, rows)


def floor(groups, run):
    """Runs 9 and 10: duroxide on its in-memory SQLite provider, over the files of both builds."""
    files = [f for g, fs in groups if g[0] == run for f in fs]
    cpu = "cpu_per_orchestration"
    rows = []
    for n in sorted(trivial_rows(files[0][1], FLOOR)):
        rejected = [trivial_rows(d, FLOOR)[n]["ack_rejections"] for _, d in files]
        rows.append([
            n,
            spread([trivial_rows(d, FLOOR)[n]["orchestrations_per_s"] for _, d in files]),
            spread(field(files, FLOOR, n, cpu, "bench_process_ms"), 1),
            spread(field(files, FLOOR, n, cpu, "machine_busy_fraction"), 2),
            spread(rejected),
        ])
    return len(files), table(
        ["dispatchers", "orchestrations/s", "bench process ms per orchestration",
         "machine busy fraction", "orchestration acks rejected (whole run)"],
        rows,
    )


def build(run, label):
    """The build commit of one group, as GROUPS gives it."""
    return next(g[2] for g in GROUPS if g[0] == run and g[1] == label)


def alone(groups, run, first, second, workload):
    """Runs 8 and 10: steadfast alone in each invocation, two builds."""
    a_files, b_files = group(groups, run, first), group(groups, run, second)
    ds = sorted(rates(a_files[0][1], workload, "steadfast"))
    rows = []
    for n in ds:
        a = [rates(d, workload, "steadfast")[n] for _, d in a_files]
        b = [rates(d, workload, "steadfast")[n] for _, d in b_files]
        change = round((statistics.median(b) / statistics.median(a) - 1) * 100)
        rows.append([n, spread(a), spread(b), f"{change:+d} %" if change else "0 %"])
    return table(
        ["dispatchers", f"{first} ({build(run, first)})", f"{second} ({build(run, second)})",
         f"{second} / {first} − 1 (medians)"],
        rows,
    )


def run8(groups, workload):
    return alone(groups, "8", "before", "after", workload)


def run6():
    """Run 6 (backlog, 3 repetitions): steadfast's found-fetch p99 and orchestrations/s."""
    files = load("run-6-backlog-rep*.json")
    rows = []
    for window in ("baseline", "with_backlog"):
        for polling in ("short", "long"):
            p99, rate, dp = [], [], []
            for _, d in files:
                prov = d["scenarios"]["backlog"]["providers"]
                s = prov["steadfast"][window]["polling"][polling]
                p99.append(s["fetch"]["found_calls"]["p99_ms"])
                rate.append(s["orchestrations_per_s"])
                dp.append(prov["duroxide-pg"][window]["polling"]["short"]["orchestrations_per_s"])
            label = "300 000 queued" if window == "with_backlog" else "empty backlog"
            rows.append([label, polling, spread(p99, 1), spread(rate),
                         spread(dp) if polling == "short" else "–"])
    return len(files), table(
        ["backlog", "polls", "steadfast claims p99 (ms)", "steadfast orchestrations/s",
         "duroxide-pg orchestrations/s (short polls)"],
        rows,
    )


def render():
    groups = [(g, load(g[3])) for g in GROUPS]
    n7 = len(group(groups, "7", "before")), len(group(groups, "7", "after"))
    n8 = len(group(groups, "8", "before")), len(group(groups, "8", "after"))
    n9 = len(group(groups, "9", "before")), len(group(groups, "9", "after"))
    nf, floor9 = floor(groups, "9")
    n10 = len(group(groups, "10", "after")), len(group(groups, "10", "pin"))
    nf10, floor10 = floor(groups, "10")
    parts = [
        "_Tables generated by `python3 bench/report/repeated_runs.py --write docs/benchmarks.md` "
        "from the JSON files named below._",
        "",
        "**Conditions recorded in each file**",
        "",
        conditions(groups),
        "",
        f"**Run 7, trivial** (orchestrations/s, median [min–max] of {n7[0]} runs before and "
        f"{n7[1]} after; ratio = median [min–max] of the per-run steadfast / duroxide-pg ratios)",
        "",
        interleaved(groups, "7", "trivial"),
        "",
        "**Run 7, stress** (same layout)",
        "",
        interleaved(groups, "7", "stress"),
        "",
        f"**Run 8, trivial** (steadfast alone, orchestrations/s, median [min–max] of {n8[0]} runs "
        f"before and {n8[1]} after; the median of two runs is their mean)",
        "",
        run8(groups, "trivial"),
        "",
        "**Run 8, stress** (same layout)",
        "",
        run8(groups, "stress"),
        "",
        f"**Run 9, trivial** (before af9be4d, after dfa12d0; orchestrations/s, median [min–max] "
        f"of {n9[0]} runs before and {n9[1]} after; ratio = median [min–max] of the per-run "
        "steadfast / duroxide-pg ratios)",
        "",
        interleaved(groups, "9", "trivial"),
        "",
        "**Run 9, stress** (same layout)",
        "",
        interleaved(groups, "9", "stress"),
        "",
        f"**Run 9, cost per trivial orchestration, before (af9be4d)** (median [min–max] of "
        f"{n9[0]} runs; CPU = CPU milliseconds of the bench process and of every `postgres` "
        "process, background ones included, over the 5 s window, divided by the orchestrations "
        "completed in it, \"total\" their sum per run; busy fraction = that CPU over the "
        "window's 2 cores; transactions = the "
        "whole database's, rows written = the run's schema's, over the whole run including "
        "warm-up, divided by the orchestrations completed)",
        "",
        cost(groups, "9", "before"),
        "",
        f"**Run 9, cost per trivial orchestration, after (dfa12d0)** (same layout, {n9[1]} runs)",
        "",
        cost(groups, "9", "after"),
        "",
        f"**Run 9, the runtime's floor** (`{FLOOR}`: duroxide with its in-memory SQLite "
        f"provider, the same trivial workload in the same invocations; median [min–max] over "
        f"all {nf} files, since it does not depend on the build; its CPU includes SQLite's)",
        "",
        floor9,
        "",
        f"**Run 10, trivial** (steadfast alone; after dfa12d0, pin df79d33; orchestrations/s, "
        f"median [min–max] of {n10[0]} runs after and {n10[1]} pin; the median of four runs is "
        "the mean of the middle two; no duroxide-pg in this run, so no ratios)",
        "",
        alone(groups, "10", "after", "pin", "trivial"),
        "",
        "**Run 10, stress** (same layout)",
        "",
        alone(groups, "10", "after", "pin", "stress"),
        "",
        f"**Run 10, cost per trivial orchestration, after (dfa12d0)** (layout of run 9's, "
        f"steadfast only, {n10[0]} runs)",
        "",
        cost(groups, "10", "after"),
        "",
        f"**Run 10, cost per trivial orchestration, pin (df79d33)** (same layout, {n10[1]} runs)",
        "",
        cost(groups, "10", "pin"),
        "",
        f"**Run 10, the runtime's floor** (`{FLOOR}`, as in run 9; median [min–max] over all "
        f"{nf10} files of run 10)",
        "",
        floor10,
        "",
        "**Run 6, backlog** (`run-6-backlog-rep{1,2,3}.json`, build bbed0df, 32 + 32 dispatchers; "
        f"median [min–max] of {run6()[0]} runs; claims = fetches that returned an item)",
        "",
        run6()[1],
    ]
    return "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", metavar="FILE", help="replace the marked block in FILE")
    a = ap.parse_args()
    text = render()
    if not a.write:
        sys.stdout.write(text)
        return
    page = open(a.write, encoding="utf-8").read()
    if page.count(BEGIN) != 1 or page.count(END) != 1 or page.index(BEGIN) > page.index(END):
        sys.exit(f"{a.write}: expected one {BEGIN} line followed by one {END} line")
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(a.write, "w", encoding="utf-8") as f:
        f.write(head + BEGIN + "\n" + text + END + tail)


if __name__ == "__main__":
    main()
