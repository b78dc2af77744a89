#!/usr/bin/env python3
"""Turn steadfast-bench JSON results into docs/benchmarks.md and SVG plots.

Usage: python3 bench/report.py [RESULTS.json] [--node NODE_RESULTS.json] [--out docs/benchmarks.md]

Without RESULTS.json the newest non-smoke file in bench/results/ is used; without --node the
newest file in bench/node/results/ (written by bench/node/bench.mjs), if any. Writes the
markdown file and, next to it, benchmarks-throughput.svg, benchmarks-fetch.svg and (with Node
results) benchmarks-node.svg. If bench/analysis.md exists it is appended verbatim (the
hand-written reading of the numbers). Python 3 standard library only.
"""

import argparse
import datetime
import glob
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROVIDERS = ["steadfast", "duroxide-pg"]
COLORS = {"steadfast": "#1f77b4", "duroxide-pg": "#d62728"}


def newest_results(*where, required=True):
    files = [
        f
        for f in glob.glob(os.path.join(ROOT, *where, "*.json"))
        if not os.path.basename(f).startswith("smoke-")
    ]
    if not files:
        if required:
            sys.exit(f"no results in {'/'.join(where)}/ (run the benchmark first)")
        return None
    return max(files, key=os.path.getmtime)


def num(v, digits=1, unit=""):
    if v is None:
        return "–"
    if isinstance(v, float):
        s = f"{v:,.{digits}f}"
    else:
        s = f"{v:,}"
    return s + unit


def pct(v):
    return "–" if v is None else f"{v * 100:.0f} %"


def times(v):
    return "–" if v is None else f"{v:.2f}×"


def ok(flag):
    if flag is None:
        return "n/a"
    return "**met**" if flag else "**missed**"


def get(d, *path, default=None):
    for p in path:
        if isinstance(d, dict) and p in d:
            d = d[p]
        elif isinstance(d, list) and isinstance(p, int) and p < len(d):
            d = d[p]
        else:
            return default
    return d


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


# ---------------------------------------------------------------------------
# SVG (hand-written, no plotting library)
# ---------------------------------------------------------------------------


def esc(s):
    return str(s).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def nice_max(v):
    if v <= 0:
        return 1.0
    exp = 10 ** math.floor(math.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if v <= m * exp:
            return m * exp
    return 10 * exp


def svg_lines(title, xlabel, ylabel, series, xs):
    """series: list of (label, color, dashed, [y or None per x]). x on a log2 axis."""
    w, h, ml, mr, mt, mb = 720, 420, 70, 200, 40, 50
    pw, ph = w - ml - mr, h - mt - mb
    ymax = nice_max(max([y for _, _, _, ys in series for y in ys if y is not None] + [1]))
    lx = [math.log2(x) for x in xs]
    x0, x1 = min(lx), max(lx) if max(lx) > min(lx) else min(lx) + 1

    def px(x):
        return ml + (math.log2(x) - x0) / (x1 - x0) * pw

    def py(y):
        return mt + ph - y / ymax * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{ml + pw / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{esc(title)}</text>',
    ]
    for i in range(6):
        y = ymax * i / 5
        parts.append(f'<line x1="{ml}" y1="{py(y):.1f}" x2="{ml + pw}" y2="{py(y):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{ml - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
    for x in xs:
        parts.append(f'<line x1="{px(x):.1f}" y1="{mt}" x2="{px(x):.1f}" y2="{mt + ph}" stroke="#eee"/>')
        parts.append(f'<text x="{px(x):.1f}" y="{mt + ph + 18}" text-anchor="middle">{x}</text>')
    parts.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
    parts.append(f'<text x="{ml + pw / 2}" y="{h - 10}" text-anchor="middle">{esc(xlabel)}</text>')
    parts.append(
        f'<text x="18" y="{mt + ph / 2}" text-anchor="middle" transform="rotate(-90 18 {mt + ph / 2})">{esc(ylabel)}</text>'
    )
    for i, (label, color, dashed, ys) in enumerate(series):
        pts = [(px(x), py(y)) for x, y in zip(xs, ys) if y is not None]
        dash = ' stroke-dasharray="6 4"' if dashed else ""
        if len(pts) > 1:
            d = " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)
            parts.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for a, b in pts:
            parts.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{color}"/>')
        ly = mt + 10 + i * 20
        parts.append(
            f'<line x1="{ml + pw + 15}" y1="{ly}" x2="{ml + pw + 45}" y2="{ly}" stroke="{color}" stroke-width="2"{dash}/>'
        )
        parts.append(f'<text x="{ml + pw + 50}" y="{ly + 4}">{esc(label)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def svg_bars(title, ylabel, groups, series_labels, colors, target=None):
    """groups: list of (group label, [value per series]); log10 y axis in ms."""
    w, h, ml, mr, mt, mb = 720, 420, 70, 170, 40, 90
    pw, ph = w - ml - mr, h - mt - mb
    vals = [v for _, vs in groups for v in vs if v]
    lo = 10 ** math.floor(math.log10(max(min(vals), 1e-3))) if vals else 0.1
    hi = 10 ** math.ceil(math.log10(max(vals))) if vals else 10
    if hi <= lo:
        hi = lo * 10

    def py(v):
        v = max(v, lo)
        return mt + ph - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * ph

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">',
        f'<rect width="{w}" height="{h}" fill="white"/>',
        f'<text x="{ml + pw / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{esc(title)}</text>',
    ]
    d = lo
    while d <= hi * 1.0001:
        parts.append(f'<line x1="{ml}" y1="{py(d):.1f}" x2="{ml + pw}" y2="{py(d):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{ml - 6}" y="{py(d) + 4:.1f}" text-anchor="end">{d:g}</text>')
        d *= 10
    if target is not None and lo <= target[0] <= hi:
        ty = py(target[0])
        parts.append(f'<line x1="{ml}" y1="{ty:.1f}" x2="{ml + pw}" y2="{ty:.1f}" stroke="#2ca02c" stroke-width="2" stroke-dasharray="6 4"/>')
        parts.append(f'<text x="{ml + pw + 15}" y="{mt + 10 + len(series_labels) * 20 + 2}" fill="#2ca02c">{esc(target[1])}</text>')
    gw = pw / max(len(groups), 1)
    bw = gw * 0.8 / max(len(series_labels), 1)
    for gi, (glabel, vs) in enumerate(groups):
        gx = ml + gi * gw + gw * 0.1
        for si, v in enumerate(vs):
            if v is None:
                continue
            x = gx + si * bw
            y = py(v)
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bw - 2:.1f}" height="{mt + ph - y:.1f}" fill="{colors[si]}"><title>{esc(glabel)} {esc(series_labels[si])}: {v:g} ms</title></rect>'
            )
        cx = ml + gi * gw + gw / 2
        lines = glabel.split("\n")
        for li, line in enumerate(lines):
            parts.append(f'<text x="{cx:.1f}" y="{mt + ph + 16 + li * 14}" text-anchor="middle" font-size="11">{esc(line)}</text>')
    parts.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>')
    parts.append(
        f'<text x="18" y="{mt + ph / 2}" text-anchor="middle" transform="rotate(-90 18 {mt + ph / 2})">{esc(ylabel)}</text>'
    )
    for si, label in enumerate(series_labels):
        ly = mt + 10 + si * 20
        parts.append(f'<rect x="{ml + pw + 15}" y="{ly - 8}" width="14" height="12" fill="{colors[si]}"/>')
        parts.append(f'<text x="{ml + pw + 35}" y="{ly + 2}">{esc(label)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------


def section_machine(r):
    m, db = r.get("machine", {}), r.get("database", {})
    started = datetime.datetime.fromtimestamp(r.get("started_at_epoch_s", 0), datetime.timezone.utc)
    rows = [
        ("run started", started.strftime("%Y-%m-%d %H:%M UTC")),
        ("command", f"`{r.get('command', '')}`"),
        ("build profile", m.get("profile")),
        ("git commit", f"{m.get('git_commit')}{' (with uncommitted changes)' if m.get('git_dirty') else ''}"),
        ("CPU", f"{m.get('cpus')} × {m.get('cpu_model')}"),
        ("memory", f"{m.get('memory_gib')} GiB"),
        ("kernel", m.get("kernel")),
        ("PostgreSQL", (db.get("version") or "").split(" on ")[0]),
        ("PostgreSQL settings", f"max_connections {db.get('max_connections')}, shared_buffers {db.get('shared_buffers')}, "
                                f"synchronous_commit {db.get('synchronous_commit')}, fsync {db.get('fsync')}"),
        ("versions", ", ".join(f"{k} {v}" for k, v in r.get("versions", {}).items())),
        ("pool size", f"{r.get('pool_size')} connections per provider (both)"),
        ("load average (1 min) before → after each scenario", ", ".join(
            f"{k} {v.get('load_average_before')} → {v.get('load_average_after')}"
            for k, v in r.get("scenarios", {}).items())),
    ]
    return "## Machine and command\n\n" + table(["", ""], rows) + "\n\nThe benchmark process, both providers and PostgreSQL share the same cores.\n"


def livelock_topologies(ll):
    """Each topology's block with the scenario-wide fields; older results have one, inline."""
    if not ll:
        return []
    if "topologies" not in ll:
        return [dict(ll, topology=f"{ll.get('processes', 1)}x{ll.get('dispatchers', 32)}")]
    shared = {k: v for k, v in ll.items() if k != "topologies"}
    return [dict(shared, **t) for t in ll["topologies"]]


def livelock_rows(ll):
    rows = []
    for v in ll.get("variants", []):
        for p in PROVIDERS:
            pr = get(v, "providers", p)
            if not pr:
                continue
            b, h = pr["baseline"], pr["hot"]
            term = h.get("hot_terminal_after_s")
            rows.append([
                ll.get("topology"),
                f"{v['lease_s']:g} s",
                p,
                f"{term:.1f} s ({h.get('hot_final_status')})" if term is not None else f"never (within {h['duration_s']:.0f} s)",
                num(v.get("target_terminal_within_s"), 1, " s"),
                h.get("hot_max_attempt_count"),
                f"{num(b['healthy_per_s'])} → {num(h['healthy_per_s'])} ({pct(pr.get('healthy_throughput_vs_baseline'))})",
                f"{num(get(h, 'fetch', 'all', 'p50_ms'), 2)} / {num(get(h, 'fetch', 'all', 'p99_ms'), 1)} / {num(get(h, 'fetch', 'all', 'max_ms'), 0)}",
                f"{num(get(b, 'fetch', 'all', 'p99_ms'), 1)}",
                h.get("ack_rejections"),
            ])
    return rows


def section_livelock(ll):
    topos = livelock_topologies(ll)
    if not topos:
        return ""
    bo = ll.get("steadfast_redelivery_backoff", {})
    sched = ", ".join(f"{x:g}" for x in bo.get("schedule_ms_without_jitter", []))
    out = ["## 1. The livelock scenario\n"]
    layouts = "; ".join(
        f"`{t['topology']}`: {t.get('processes')} process{'es' if t.get('processes', 1) > 1 else ''} × "
        f"{t.get('dispatchers_per_process', t.get('dispatchers'))} orchestration dispatchers "
        f"({t.get('worker_dispatchers')} worker dispatchers in all)"
        for t in topos
    )
    out.append(
        f"32 orchestration dispatchers in all, as {layouts}. With several processes the bench re-executes itself as "
        "child worker processes on the same schema; the parent runs the client and the closed loop and merges the "
        "children's fetch samples and ack counts. "
        f"`max_attempts` {ll.get('max_attempts')}, "
        f"{ll.get('healthy_in_flight')} healthy one-activity orchestrations kept in flight by a closed loop. "
        f"One instance fails on every turn: every fetch of it is delayed `lock_timeout + {ll.get('fetch_overrun_ms')} ms` "
        f"(as in `crates/steadfast-pg/tests/livelock_regression.rs`), so every ack of it hits a dead lease. "
        f"Each provider first runs the same load without that instance (baseline). Polling: {ll.get('polling')}; "
        f"the first {ll.get('warmup_s')} s of each run are not counted.\n"
    )
    out.append(
        f"steadfast's redelivery backoff (product defaults): base {bo.get('base_ms'):g} ms, cap {bo.get('cap_ms'):g} ms, "
        f"jitter {bo.get('jitter')}: after attempt 1…10 the instance waits {sched} ms "
        f"(Σ {bo.get('sum_ms_without_jitter', 0) / 1000:.2f} s, ≤ {bo.get('sum_ms_max_jitter', 0) / 1000:.2f} s with jitter) "
        f"past the end of the lease.\n"
    )
    out.append(
        "“Bound” is the earliest any provider that honours leases can finish the hot instance here: "
        "11 hand-outs each hold the full lease (the injected delay outlives it), plus the backoffs, plus the last "
        "ack's overrun; the target column is that bound + 2 s.\n"
    )
    rows = [r for t in topos for r in livelock_rows(t)]
    out.append(table(
        ["topology", "lease", "provider", "hot instance terminal", "target", "max attempt_count",
         "healthy/s: baseline → with hot (ratio)", "fetch p50 / p99 / max (ms), with hot", "fetch p99 baseline (ms)",
         "ack rejections"],
        rows,
    ))
    out.append("")
    for t in topos:
        for v in t.get("variants", []):
            rt = v.get("ratios", {})
            out.append(
                f"- {t['topology']}, lease {v['lease_s']:g} s: healthy throughput steadfast / duroxide-pg = "
                f"{times(rt.get('healthy_per_s_steadfast_over_duroxide_pg'))}, "
                f"fetch p99 duroxide-pg / steadfast = {times(rt.get('fetch_p99_duroxide_pg_over_steadfast'))}"
            )
    return "\n".join(out) + "\n"


def section_contention(c):
    if not c:
        return ""
    out = ["## 2. Hot-instance contention\n"]
    out.append(
        f"{c.get('dispatchers')} orchestration dispatchers, {c.get('worker_dispatchers')} worker dispatchers, "
        f"{c.get('instances')} instances that each fan out {c.get('fanout')} no-op activities, join, "
        f"{c.get('rounds_per_execution')} rounds, then continue as new, forever: every instance always has new "
        f"messages while one dispatcher holds it. Polling: {c.get('polling')}.\n"
    )
    rows = []
    for p in PROVIDERS:
        v = get(c, "providers", p)
        if not v:
            continue
        f = v["fetch"]
        rows.append([
            p,
            f"{num(get(f, 'all', 'p50_ms'), 2)} / {num(get(f, 'all', 'p90_ms'), 1)} / {num(get(f, 'all', 'p99_ms'), 1)} / {num(get(f, 'all', 'max_ms'), 0)}",
            f"{num(get(f, 'found_calls', 'p50_ms'), 2)} / {num(get(f, 'found_calls', 'p99_ms'), 1)}",
            f"{num(get(f, 'empty_calls', 'p50_ms'), 2)} / {num(get(f, 'empty_calls', 'p99_ms'), 1)}",
            f"{num(f['calls'])} ({num(v.get('fetch_calls_per_s'), 0)}/s)",
            pct(f.get("empty_fraction")),
            num(v.get("messages_consumed_per_s")),
            num(v.get("turns_per_s")),
            v.get("ack_rejections"),
        ])
    out.append(table(
        ["provider", "fetch p50 / p90 / p99 / max (ms)", "returned an item p50 / p99", "came back empty p50 / p99",
         "fetch calls", "empty", "messages consumed/s", "turns/s", "ack rejections"],
        rows,
    ))
    rt = c.get("ratios") or {}
    out.append(
        f"\nfetch p99 duroxide-pg / steadfast = {times(rt.get('fetch_p99_duroxide_pg_over_steadfast'))}; "
        f"messages/s steadfast / duroxide-pg = {times(rt.get('messages_per_s_steadfast_over_duroxide_pg'))}."
    )
    return "\n".join(out) + "\n"


def section_throughput(t, vs):
    if not t:
        return ""
    out = ["## 3. Throughput\n"]
    out.append(
        "N orchestration dispatchers and N worker dispatchers, runtime defaults otherwise (steadfast long-polls "
        "with LISTEN/NOTIFY; duroxide-pg ignores the poll timeout and polls every 100 ms when idle). "
        f"`trivial`: a closed loop keeps {t.get('in_flight_trivial')} one-activity orchestrations in flight "
        "(orchestrations/s = activities/s). `stress`: duroxide's own provider stress workload "
        "(`duroxide::provider_stress_tests::run_stress_test`: 20 concurrent orchestrations each fanning out 5 activities "
        "of 10 ms; its own orchestrations/s and activities/s, which include draining the last instances).\n"
    )
    out.append("![throughput](benchmarks-throughput.svg)\n")
    for w in ("trivial", "stress"):
        block = t.get(w)
        if not block:
            continue
        rows = []
        prov = block.get("providers", {})
        ns = [r["dispatchers"] for r in prov.get("steadfast", prov.get("duroxide-pg", []))]
        for i, n in enumerate(ns):
            s = get(prov, "steadfast", i, default={}) or {}
            d = get(prov, "duroxide-pg", i, default={}) or {}
            r = get(block, "ratios", i, "orchestrations_per_s_steadfast_over_duroxide_pg")
            rows.append([
                n,
                num(s.get("orchestrations_per_s")),
                num(s.get("activities_per_s")),
                num(d.get("orchestrations_per_s")),
                num(d.get("activities_per_s")),
                times(r),
            ])
        out.append(f"**{w}**\n")
        out.append(table(
            ["dispatchers", "steadfast orch/s", "steadfast activities/s", "duroxide-pg orch/s",
             "duroxide-pg activities/s", "steadfast / duroxide-pg"],
            rows,
        ))
        out.append("")
    if vs:
        s = vs.get("steadfast") or {}
        d = vs.get("duroxide-pg") or {}
        out.append(
            f"Against the database's own ceiling ({num(vs.get('ceiling_claim_ack_jobs_per_s'))} claim+ack jobs/s, scenario 4), "
            f"counting {vs.get('jobs_per_trivial_orchestration')} queue jobs per trivial orchestration (start turn, activity, "
            f"completing turn): steadfast's best {num(s.get('best_trivial_orchestrations_per_s'))} orch/s = "
            f"{num(s.get('queue_jobs_per_s'), 0)} jobs/s = {pct(s.get('fraction_of_ceiling'))} of the ceiling; "
            f"duroxide-pg's best {num(d.get('best_trivial_orchestrations_per_s'))} orch/s = {pct(d.get('fraction_of_ceiling'))}.\n"
        )
    return "\n".join(out) + "\n"


def section_ceiling(c):
    if not c:
        return ""
    out = ["## 4. Ceiling: a minimal SKIP LOCKED queue on this PostgreSQL\n"]
    out.append(
        "Table `q(id bigserial primary key, payload text, locked_until timestamptz, lock_token bigint)`. One job = "
        "a claim (`UPDATE … WHERE id = (SELECT id … ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id`, "
        "committed) and an ack (`DELETE … WHERE id = $1 AND lock_token = $2`, committed). `enqueue+claim+ack` "
        "also inserts a row first. sqlx clients are tokio tasks on one pool (the providers' client stack); "
        "pgbench runs the claim+ack script with prepared statements.\n"
    )
    rows = []
    for r in c.get("runs", []):
        rows.append([
            r.get("client"),
            r.get("variant"),
            r.get("clients"),
            num(r.get("jobs_per_s")),
            num(get(r, "job_latency", "p50_ms"), 2) if r.get("client") == "sqlx" else num(r.get("latency_avg_ms"), 2) + " (avg)",
            num(get(r, "job_latency", "p99_ms"), 1) if r.get("client") == "sqlx" else "–",
        ])
    out.append(table(["client", "variant", "clients", "jobs/s", "job latency p50 (ms)", "p99 (ms)"], rows))
    return "\n".join(out) + "\n"


def work(run):
    """Transactions / rows written per completed instance, as bench/node records them."""
    d = (run or {}).get("database") or {}
    t, w = d.get("transactions_per_completion"), d.get("rows_written_per_completion")
    return "–" if t is None else f"{num(t, 1)} / {num(w, 1)}"


def section_node(n, rel):
    if not n:
        return (
            "## 5–6. Node binding overhead and the DBOS peer\n\n"
            "No results of `node bench/node/bench.mjs` in `bench/node/results/` yet (see Reproduce below).\n"
        )
    w = n.get("workload", {})
    out = ["## 5. Binding overhead: the Node binding against the same workload in Rust\n"]
    out.append(
        f"From `{rel}`, written by `node bench/node/bench.mjs` ({n.get('profile')} build of the addon and of "
        f"`steadfast-node-baseline`, Node {n.get('node_version')}, `{n.get('command')}`). "
        f"{w.get('orchestration')}. Through the binding: JS generator orchestration and JS activity on the "
        "repo's `lib/`; in Rust: the same orchestration written against duroxide directly "
        "(`bench/node/rust-baseline`). Both on steadfast-pg, each in a fresh schema, with the same runtime options "
        f"(N orchestration and N worker dispatchers, `maxAttempts` {get(w, 'runtime_options', 'maxAttempts')}, "
        f"log level {get(w, 'runtime_options', 'logLevel')}, duroxide's defaults otherwise) and the same pools "
        f"(client and runtime, {w.get('pool_per_steadfast_pool')} connections each). "
        f"Closed loop: {w.get('in_flight')} lanes; {w.get('completion')}; "
        f"only completions inside the {w.get('window_s')} s window after a {w.get('warmup_s')} s warm-up count.\n"
    )
    if n.get("smoke"):
        out.append("> **Smoke run**: seconds-long windows; the numbers only show that the benchmark works.\n")
    out.append("![Node binding](benchmarks-node.svg)\n")
    rows = []
    for r in n.get("overhead", []):
        rows.append([
            r.get("dispatchers"),
            num(get(r, "rust", "orchestrations_per_s")),
            num(get(r, "node", "orchestrations_per_s")),
            times(r.get("node_over_rust")),
            pct(r.get("overhead")),
            f"{num(get(r, 'rust', 'latency_ms', 'p50'), 1)} / {num(get(r, 'rust', 'latency_ms', 'p99'), 1)}",
            f"{num(get(r, 'node', 'latency_ms', 'p50'), 1)} / {num(get(r, 'node', 'latency_ms', 'p99'), 1)}",
            work(r.get("rust")),
            work(r.get("node")),
            f"{r.get('load_average_before')} → {r.get('load_average_after')}",
        ])
    out.append(table(
        ["dispatchers", "Rust orch/s", "Node orch/s", "Node / Rust", "overhead", "Rust latency p50 / p99 (ms)",
         "Node latency p50 / p99 (ms)", "Rust: transactions / rows written per orch.",
         "Node: transactions / rows written per orch.", "load average"],
        rows,
    ))
    out.append(
        "\nOverhead = (Rust − Node) / Rust orchestrations/s at the same dispatcher count. Transactions and rows "
        "written per completed orchestration: the deltas of `pg_stat_database` (`xact_commit + xact_rollback`, "
        "`tup_inserted + tup_updated + tup_deleted`, every session of the database) over the run, divided by the "
        "orchestrations completed in it (warm-up included; the last instances in flight add up to ~3 %).\n"
    )
    peer = n.get("peer")
    out.append("## 6. Peer: DBOS Transact for TypeScript\n")
    if not peer:
        out.append("Not run (`--peer none`).\n")
        return "\n".join(out) + "\n"
    sm = n.get("summary", {})
    out.append(
        f"`@dbos-inc/dbos-sdk` {peer.get('sdk_version')} (a dependency of `bench/node/` only), in the same invocation "
        f"and on the same PostgreSQL: a workflow with one step (returns its input), started with "
        f"`DBOS.startWorkflow` and awaited with `handle.getResult()` by the same closed loop ({peer.get('in_flight')} lanes), "
        f"its system tables in a fresh schema, one pool of {peer.get('system_database_pool_size')} connections "
        "(the two steadfast pools together). DBOS runs workflows in the calling process, so it has no dispatcher "
        "count; it is compared with steadfast's best.\n"
    )
    best_node = max(n.get("overhead", []), key=lambda r: get(r, "node", "orchestrations_per_s") or 0, default=None)
    out.append(table(
        ["", "workflows (orchestrations)/s", "latency p50 / p99 (ms)", "steadfast / DBOS",
         "transactions / rows written per workflow"],
        [
            ["DBOS", num(peer.get("orchestrations_per_s")),
             f"{num(get(peer, 'latency_ms', 'p50'), 1)} / {num(get(peer, 'latency_ms', 'p99'), 1)}", "1.00×", work(peer)],
            ["steadfast through Node (best)", num(sm.get("node_best_orchestrations_per_s")), "", times(sm.get("node_best_over_dbos")),
             work(best_node.get("node")) if best_node else "–"],
            ["steadfast in Rust (best)", num(sm.get("rust_best_orchestrations_per_s")), "", times(sm.get("rust_best_over_dbos")), ""],
        ],
    ))
    return "\n".join(out) + "\n"


def targets_node(n):
    rows = []
    if not n:
        return rows
    ov = [r.get("overhead") for r in n.get("overhead", []) if r.get("overhead") is not None]
    if ov:
        rows.append(["5", "binding overhead ≤ 25 %", f"{min(ov) * 100:.0f} % – {max(ov) * 100:.0f} % across dispatcher counts",
                     ok(max(ov) <= 0.25)])
    r = get(n, "summary", "node_best_over_dbos")
    if r is not None:
        rows.append(["6", "steadfast through Node ≥ DBOS workflows/s",
                     f"{num(get(n, 'summary', 'node_best_orchestrations_per_s'))} vs {num(get(n, 'summary', 'dbos_workflows_per_s'))} /s ({times(r)})",
                     ok(r >= 1)])
    return rows


def svg_node(n):
    rows = n.get("overhead", [])
    xs = [r["dispatchers"] for r in rows]
    if not xs:
        return None
    series = [
        ("steadfast, Rust", COLORS["steadfast"], True, [get(r, "rust", "orchestrations_per_s") for r in rows]),
        ("steadfast, Node", COLORS["steadfast"], False, [get(r, "node", "orchestrations_per_s") for r in rows]),
    ]
    if n.get("peer"):
        series.append(("DBOS (no dispatchers)", "#2ca02c", True, [get(n, "peer", "orchestrations_per_s")] * len(xs)))
    return svg_lines("Trivial orchestrations/s: Node binding, Rust, DBOS", "dispatchers (orchestration = worker)",
                     "orchestrations / s", series, xs)


def targets(r, n=None):
    sc = r.get("scenarios", {})
    rows = []
    ll = sc.get("livelock")
    for topo in livelock_topologies(ll):
        for v in topo.get("variants", []):
            s = get(v, "providers", "steadfast")
            if not s:
                continue
            h = s["hot"]
            term = h.get("hot_terminal_after_s")
            tgt = v.get("target_terminal_within_s")
            lit = get(ll, "steadfast_redelivery_backoff", "sum_ms_max_jitter", default=0) / 1000 + 2
            case = f"1 ({topo['topology']}, lease {v['lease_s']:g} s)"
            rows.append([case, "hot instance terminal ≤ lease-honouring bound + 2 s",
                         f"{num(term, 1, ' s') if term is not None else 'never'} vs {num(tgt, 1, ' s')}",
                         ok(term is not None and term <= tgt)])
            rows.append([case, "… as literally stated: ≤ Σ backoffs + 2 s",
                         f"{num(term, 1, ' s') if term is not None else 'never'} vs {lit:.1f} s",
                         ok(term is not None and term <= lit)])
            rows.append([case, "max attempt_count ≤ 11",
                         h.get("hot_max_attempt_count"), ok((h.get("hot_max_attempt_count") or 0) <= 11)])
            rel = s.get("healthy_throughput_vs_baseline")
            rows.append([case, "healthy throughput ≥ 90 % of baseline", pct(rel),
                         ok(rel is not None and rel >= 0.9)])
            p99 = get(h, "fetch", "all", "p99_ms")
            rows.append([case, "fetch p99 < 50 ms (32 dispatchers)", num(p99, 1, " ms"),
                         ok(p99 is not None and p99 < 50)])
    c = sc.get("contention")
    if c and get(c, "providers", "steadfast"):
        p99 = get(c, "providers", "steadfast", "fetch", "all", "p99_ms")
        rows.append(["2", "fetch p99 < 50 ms (32 dispatchers)", num(p99, 1, " ms"), ok(p99 is not None and p99 < 50)])
    t = sc.get("throughput")
    if t:
        for w in ("trivial", "stress"):
            rs = [x.get("orchestrations_per_s_steadfast_over_duroxide_pg") for x in get(t, w, "ratios", default=[])]
            rs = [x for x in rs if x is not None]
            if rs:
                rows.append(["3 (" + w + ")", "≥ 3× duroxide-pg orchestrations/s",
                             f"{min(rs):.2f}× – {max(rs):.2f}× across dispatcher counts", ok(min(rs) >= 3)])
        best = max([x.get("orchestrations_per_s") or 0 for x in get(t, "trivial", "providers", "steadfast", default=[])] or [0])
        if get(t, "trivial", "providers", "steadfast"):
            rows.append(["3 (trivial)", "≥ 250 one-activity orchestrations/s", num(best, 1, " /s"), ok(best >= 250)])
    rows += targets_node(n)
    if not rows:
        return ""
    return "## Targets\n\n" + table(["scenario", "target (steadfast)", "measured", ""], rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?")
    ap.add_argument("--node", help="results of bench/node/bench.mjs (default: newest in bench/node/results/)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    a = ap.parse_args()
    path = a.results or newest_results("bench", "results")
    with open(path) as f:
        r = json.load(f)
    node_path = a.node or newest_results("bench", "node", "results", required=False)
    n = None
    if node_path:
        with open(node_path) as f:
            n = json.load(f)
    sc = r.get("scenarios", {})
    out_dir = os.path.dirname(os.path.abspath(a.out))
    os.makedirs(out_dir, exist_ok=True)

    # Plots.
    t = sc.get("throughput")
    if t:
        xs = t.get("dispatchers") or []
        series = []
        for w, dashed in (("trivial", False), ("stress", True)):
            for p in PROVIDERS:
                rows = get(t, w, "providers", p)
                if rows:
                    by_n = {x["dispatchers"]: x.get("orchestrations_per_s") for x in rows}
                    series.append((f"{p} {w}", COLORS[p], dashed, [by_n.get(n) for n in xs]))
        if xs and series:
            with open(os.path.join(out_dir, "benchmarks-throughput.svg"), "w") as f:
                f.write(svg_lines("Orchestrations/s by dispatcher count", "dispatchers (orchestration = worker)",
                                  "orchestrations / s", series, xs))
    groups = []
    for topo in livelock_topologies(sc.get("livelock")):
        for v in topo.get("variants", []):
            vals = [get(v, "providers", p, "hot", "fetch", "all", "p99_ms") for p in PROVIDERS]
            groups.append((f"livelock {topo['topology']}\nlease {v['lease_s']:g} s", vals))
    if get(sc, "contention", "providers"):
        groups.append(("contention", [get(sc, "contention", "providers", p, "fetch", "all", "p99_ms") for p in PROVIDERS]))
    if groups:
        with open(os.path.join(out_dir, "benchmarks-fetch.svg"), "w") as f:
            f.write(svg_bars("fetch_orchestration_item p99, 32 dispatchers", "ms (log scale)", groups, PROVIDERS,
                             [COLORS[p] for p in PROVIDERS], target=(50, "- - target 50 ms")))

    if n:
        svg = svg_node(n)
        if svg:
            with open(os.path.join(out_dir, "benchmarks-node.svg"), "w") as f:
                f.write(svg)

    rel = os.path.relpath(path, ROOT)
    node_rel = os.path.relpath(node_path, ROOT) if node_path else None
    md = [
        "# Benchmarks: steadfast-pg and duroxide-pg on the duroxide runtime\n",
        f"Generated by `python3 bench/report.py {rel}{' --node ' + node_rel if node_rel else ''}` from `{rel}` (written by `steadfast-bench`, "
        "source in `bench/`). Both providers run in the same invocation, on the same machine, against the same "
        "PostgreSQL, each in a fresh schema, through the same measuring wrapper (`bench/src/probe.rs`).\n",
    ]
    if r.get("smoke"):
        md.append("> **Smoke run**: seconds-long windows; the numbers only show that the scenarios work.\n")
    md.append(section_machine(r))
    md.append(targets(r, n))
    if groups:
        md.append("![fetch p99](benchmarks-fetch.svg)\n")
    md.append(section_livelock(sc.get("livelock")))
    md.append(section_contention(sc.get("contention")))
    md.append(section_throughput(sc.get("throughput"), r.get("throughput_vs_ceiling")))
    md.append(section_ceiling(sc.get("ceiling")))
    md.append(section_node(n, node_rel))
    analysis = os.path.join(ROOT, "bench", "analysis.md")
    if os.path.exists(analysis):
        with open(analysis) as f:
            md.append(f.read().strip() + "\n")
    md.append(
        "## Reproduce\n\n```sh\n"
        "cargo build --release -p steadfast-bench\n"
        f"./target/release/steadfast-bench --out bench/results/<file>.json   # all scenarios, both providers\n"
        "python3 bench/report.py bench/results/<file>.json                 # this page and its SVGs\n"
        "./target/debug/steadfast-bench --smoke --out target/bench-smoke.json # seconds-long check (CI)\n"
        "cargo build --release -p steadfast-node -p steadfast-node-baseline\n"
        "(cd bench/node && npm ci)\n"
        "node bench/node/bench.mjs --out bench/node/results/<file>.json     # scenarios 5 and 6\n"
        "python3 bench/report.py bench/results/<file>.json --node bench/node/results/<file>.json\n"
        "```\n"
    )
    with open(a.out, "w") as f:
        f.write("\n".join(x for x in md if x))
    print(f"wrote {os.path.relpath(a.out, ROOT)} from {rel}")


if __name__ == "__main__":
    main()
