#!/usr/bin/env python3
"""Tables of the repeated runs (throughput runs 7 and 8, backlog run 6) for docs/benchmarks.md.

Usage:
    python3 bench/report/repeated_runs.py                            # print the tables
    python3 bench/report/repeated_runs.py --write docs/benchmarks.md # replace them in the page

With --write, the text between the lines `<!-- repeated-runs:begin -->` and
`<!-- repeated-runs:end -->` of the given file is replaced; nothing else in it changes.

Reads bench/results/run-7-wake-*.json and bench/results/run-8-wake-steadfast-only-*.json
(written by steadfast-bench --scenario throughput) and bench/results/run-6-backlog-rep*.json
(--scenario backlog). Per dispatcher count it gives, for each
group of repetitions, the minimum, median and maximum orchestrations/s, and, where duroxide-pg
ran in the same invocation, the median (min-max) of the per-run steadfast / duroxide-pg ratios
as the bench recorded them. A median of two runs is their mean.

The build each group ran is not in the JSON: `machine.git_commit` records the HEAD of the
checkout the binary was started from, not the commit it was built from (the runs used binaries
copied to /tmp). The build commits below are those bench/analysis.md and the commit messages
of 342de08 and 51221a4 give. Python 3 standard library only.
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
]
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


def run7(groups, workload):
    before = dict(groups)[("7", "before", "215d126", GROUPS[0][3])]
    after = dict(groups)[("7", "after", "37a075c", GROUPS[1][3])]
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


def run8(groups, workload):
    before = dict(groups)[("8", "before", "215d126", GROUPS[2][3])]
    after = dict(groups)[("8", "after", "0ba3f08", GROUPS[3][3])]
    ds = sorted(rates(before[0][1], workload, "steadfast"))
    rows = []
    for n in ds:
        b = [rates(d, workload, "steadfast")[n] for _, d in before]
        a = [rates(d, workload, "steadfast")[n] for _, d in after]
        change = round((statistics.median(a) / statistics.median(b) - 1) * 100)
        rows.append([n, spread(b), spread(a), f"{change:+d} %" if change else "0 %"])
    return table(
        ["dispatchers", "before (215d126)", "after (0ba3f08)", "after / before − 1 (medians)"],
        rows,
    )


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
    n7 = len(dict(groups)[GROUPS[0]]), len(dict(groups)[GROUPS[1]])
    n8 = len(dict(groups)[GROUPS[2]]), len(dict(groups)[GROUPS[3]])
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
        run7(groups, "trivial"),
        "",
        "**Run 7, stress** (same layout)",
        "",
        run7(groups, "stress"),
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
