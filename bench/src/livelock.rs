//! Scenario 1: the PilotSwarm livelock.
//!
//! 32 orchestration dispatchers, `max_attempts` 10, in two topologies: one process with one
//! runtime of 32 dispatchers (`1x32`), and 8 child processes with a runtime of 4 dispatchers
//! each on the same schema (`8x4`, see `fleet.rs`). One orchestration (`hot`) fails on every
//! turn: the probe delays every fetch of it past the lease (`lock_timeout + 300 ms`), so every
//! ack of it hits a dead lease. Meanwhile a closed loop in this process keeps `in_flight`
//! healthy one-activity orchestrations running. Each provider also runs the same load without
//! the hot instance (the baseline).
//!
//! Both providers short-poll here (`dispatcher_long_poll_timeout` = 0; duroxide-pg ignores
//! the poll timeout anyway), so every `fetch_orchestration_item` call is one claim and its
//! wall time is the claim latency.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use duroxide::{Client, OrchestrationStatus, RuntimeOptions};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::common::{
    self, Env, Kind, MAX_ATTEMPTS, TRIVIAL, Topology, fetch_json, progress, ratio, round2,
};
use crate::driver::ClosedLoop;
use crate::fleet::{Fleet, FleetSpec, count_diagnostics};
use steadfast_pg::Layered;

use crate::probe::{Probe, ProbeStats};

const IN_FLIGHT: usize = 64;
const OVERRUN: Duration = Duration::from_millis(300);
/// The longest a smoke run goes on past its window waiting for the first signs of progress.
const SMOKE_PROGRESS_LIMIT: Duration = Duration::from_secs(60);
struct Cfg {
    leases: Vec<Duration>,
    /// Completions and fetches in the first `warmup` of a run are not counted.
    warmup: Duration,
    baseline: Duration,
    hot_min: Duration,
    /// Upper bound of a run with the hot instance, per lease.
    hot_max: fn(Duration) -> Duration,
}

fn cfg(env: &Env) -> Cfg {
    if env.smoke {
        Cfg {
            leases: vec![Duration::from_secs(1)],
            warmup: Duration::from_millis(500),
            baseline: Duration::from_millis(1500),
            hot_min: Duration::from_millis(2000),
            hot_max: |_| Duration::from_millis(2000),
        }
    } else {
        Cfg {
            leases: vec![Duration::from_secs(5), Duration::from_secs(1)],
            warmup: Duration::from_secs(2),
            baseline: Duration::from_secs(15),
            hot_min: Duration::from_secs(20),
            // steadfast needs 11 leases + the backoff schedule (see expected_bound); give
            // it ~15 % head room, then call it "never".
            hot_max: |lease| expected_bound(lease).mul_f64(1.15) + Duration::from_secs(5),
        }
    }
}

/// Smoke runs of several processes get a few more seconds: eight fresh processes need a
/// while for their first turns on a loaded 2-core machine.
fn cfg_for(env: &Env, topo: Topology) -> Cfg {
    let c = cfg(env);
    if env.smoke && topo.processes > 1 {
        Cfg {
            baseline: Duration::from_millis(3000),
            hot_min: Duration::from_millis(3000),
            hot_max: |_| Duration::from_millis(3000),
            ..c
        }
    } else {
        c
    }
}

/// The earliest a provider that honours leases can make the hot instance terminal:
/// hand-outs 1..=max_attempts each hold the lease to its end, the instance becomes
/// claimable again after steadfast's backoff, the (max_attempts + 1)-th hand-out is
/// poisoned by the runtime and its ack lands `lease + overrun` later. Jitter at its maximum.
pub fn expected_bound(lease: Duration) -> Duration {
    let b = common::steadfast_backoff();
    let backoffs: Duration = (1..=MAX_ATTEMPTS).map(|k| b.delay(k, 1.0)).sum();
    lease * (MAX_ATTEMPTS + 1) + OVERRUN + backoffs
}

/// The runtime of one process: `dispatchers` orchestration and `workers` worker dispatchers.
pub fn runtime_options(lease: Duration, dispatchers: usize, workers: usize) -> RuntimeOptions {
    RuntimeOptions {
        max_attempts: MAX_ATTEMPTS,
        orchestration_concurrency: dispatchers,
        worker_concurrency: workers,
        orchestrator_lock_timeout: lease,
        dispatcher_long_poll_timeout: Duration::ZERO,
        ..RuntimeOptions::default()
    }
}

fn describe(s: &OrchestrationStatus) -> String {
    match s {
        OrchestrationStatus::NotFound => "NotFound".into(),
        OrchestrationStatus::Running { .. } => "Running".into(),
        OrchestrationStatus::Completed { .. } => "Completed".into(),
        OrchestrationStatus::Failed { details, .. } => format!("Failed ({})", details.category()),
    }
}

/// Where the runtimes of one run live.
enum Runtimes {
    InProcess(Arc<duroxide::runtime::Runtime>, Arc<Layered<Probe>>),
    Children(Fleet),
}

impl Runtimes {
    /// (hot hand-outs, max attempt, ack rejections) so far.
    fn live(&self, stats: &ProbeStats) -> (u32, u32, u64) {
        match self {
            Runtimes::InProcess(..) => {
                let c = &stats.counters;
                (
                    c.hot_fetches.load(Ordering::Relaxed),
                    c.hot_max_attempt.load(Ordering::Relaxed),
                    c.ack_rejected.load(Ordering::Relaxed),
                )
            }
            Runtimes::Children(f) => f.live(),
        }
    }

    /// Shuts the runtimes down; child processes' measurements are merged into `stats`.
    async fn stop(
        self,
        env: &Env,
        stats: &ProbeStats,
        diagnostics: &mut BTreeMap<String, u64>,
    ) -> Result<()> {
        match self {
            Runtimes::InProcess(rt, _probe) => {
                rt.shutdown(Some(env.shutdown_grace_ms())).await;
                Ok(())
            }
            Runtimes::Children(fleet) => fleet.stop(stats, diagnostics).await.map(|_| ()),
        }
    }
}

async fn one_run(
    env: &Env,
    kind: Kind,
    topo: Topology,
    lease: Duration,
    with_hot: bool,
    c: &Cfg,
) -> Result<Value> {
    let label = format!(
        "ll{}{}{}",
        topo.processes,
        lease.as_secs(),
        if with_hot { "h" } else { "b" }
    );
    // With child processes this process only runs the client: a small pool is enough.
    let parent_env = if topo.processes > 1 {
        env.client_only()
    } else {
        env.clone()
    };
    let built = common::build(&parent_env, kind, &label).await?;
    let mut diag_rx = built.steadfast.as_ref().map(|p| p.subscribe());
    let hot = format!("hot-{}", built.schema);
    let hot_opt = with_hot.then(|| hot.clone());
    let client = Arc::new(Client::new(built.provider.clone()));
    let (tx, rx) = mpsc::unbounded_channel();
    let (stats, runtimes) = if topo.processes == 1 {
        let probe = Arc::new(Layered(Probe::new(
            built.provider.clone(),
            hot_opt.clone(),
            OVERRUN,
            Some(tx),
        )));
        let rt = common::start_runtime(
            probe.clone(),
            runtime_options(
                lease,
                topo.dispatchers_per_process,
                topo.workers_per_process(),
            ),
        )
        .await;
        (probe.stats.clone(), Runtimes::InProcess(rt, probe))
    } else {
        let stats = Arc::new(ProbeStats::new());
        let spec = FleetSpec {
            env,
            kind,
            schema: &built.schema,
            processes: topo.processes,
            dispatchers_per_process: topo.dispatchers_per_process,
            workers_per_process: topo.workers_per_process(),
            lease,
            hot: hot_opt.clone(),
            overrun: OVERRUN,
            long_poll: false,
        };
        match Fleet::start(spec, stats.clone(), tx).await {
            Ok(f) => (stats, Runtimes::Children(f)),
            Err(e) => {
                common::teardown(env, built).await;
                return Err(e);
            }
        }
    };
    // Only now, with every runtime up (eight child processes take seconds to start on a busy
    // machine), so the hot instance's clock starts with the run's. Started before the healthy
    // load, it is the oldest row: every dispatcher sees it first.
    if with_hot && let Err(e) = client.start_orchestration(&hot, TRIVIAL, "hot").await {
        runtimes.stop(env, &stats, &mut BTreeMap::new()).await.ok();
        common::teardown(env, built).await;
        return Err(e.into());
    }
    let run_start_ms = stats.now_ms();
    let started = Instant::now();
    let driver = ClosedLoop::spawn(client.clone(), "ok".into(), IN_FLIGHT, rx);

    let max = if with_hot {
        (c.hot_max)(lease)
    } else {
        c.baseline
    };
    let mut hot_terminal: Option<(f64, String)> = None;
    let mut next_print = Duration::from_secs(5);
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let el = started.elapsed();
        if with_hot
            && hot_terminal.is_none()
            && let Ok(s) = client.get_orchestration_status(&hot).await
            && matches!(
                s,
                OrchestrationStatus::Completed { .. } | OrchestrationStatus::Failed { .. }
            )
        {
            hot_terminal = Some((el.as_secs_f64(), describe(&s)));
            progress(&format!(
                "  hot instance terminal after {:.1} s: {}",
                el.as_secs_f64(),
                describe(&s)
            ));
        }
        if el >= next_print {
            next_print += Duration::from_secs(5);
            let (hot_fetches, hot_attempt, rejected) = runtimes.live(&stats);
            progress(&format!(
                "  {} {}: {:>3.0} s, healthy completed {}, hot hand-outs {} (max attempt {}), ack rejections {}",
                kind.name(),
                topo.name(),
                el.as_secs_f64(),
                stats.counters.completed.load(Ordering::Relaxed),
                hot_fetches,
                hot_attempt,
                rejected,
            ));
        }
        let done = if with_hot {
            (hot_terminal.is_some() && el >= c.hot_min) || el >= max
        } else {
            el >= c.baseline
        };
        // A smoke run only checks progress: on a loaded machine it may need longer than its
        // window for the first healthy completion and the first hot hand-out.
        let progressed = stats.counters.completed.load(Ordering::Relaxed) > 0
            && (!with_hot || runtimes.live(&stats).0 > 0);
        if done && (!env.smoke || progressed || el >= SMOKE_PROGRESS_LIMIT) {
            break;
        }
    }
    let end_ms = stats.now_ms();
    let elapsed = started.elapsed();
    driver.stop();
    let from_ms = run_start_ms + c.warmup.as_millis() as u32;
    let healthy = stats.completions_between(from_ms, end_ms);
    let window_s = (end_ms.saturating_sub(from_ms)) as f64 / 1000.0;
    let rate = healthy as f64 / window_s.max(0.001);

    // steadfast's own view of the hot instance's attempts and its diagnostics.
    let mut db_attempts = Value::Null;
    if with_hot
        && let Some(p) = &built.steadfast
        && let Ok(n) = p.max_attempt_count(&hot).await
    {
        db_attempts = json!(n);
    }
    let mut diagnostics = BTreeMap::new();
    let stopped = runtimes.stop(env, &stats, &mut diagnostics).await;
    if let Some(rx) = diag_rx.as_mut() {
        count_diagnostics(rx, Some(&hot), &mut diagnostics);
    }
    let cn = &stats.counters;
    let total_completed = cn.completed.load(Ordering::Relaxed);
    let fetches = stats.fetches_since(from_ms);
    let result = json!({
        "provider": kind.name(),
        "topology": topo.name(),
        "lease_s": lease.as_secs_f64(),
        "with_hot_instance": with_hot,
        "duration_s": round2(elapsed.as_secs_f64()),
        "measured_window_s": round2(window_s),
        "healthy_completed": healthy,
        "healthy_completed_total": total_completed,
        "healthy_per_s": round2(rate),
        "hot_terminal_after_s": hot_terminal.as_ref().map(|t| round2(t.0)),
        "hot_final_status": hot_terminal.as_ref().map(|t| t.1.clone()),
        "hot_handouts": cn.hot_fetches.load(Ordering::Relaxed),
        "hot_max_attempt_count": cn.hot_max_attempt.load(Ordering::Relaxed),
        "hot_max_attempt_count_db": db_attempts,
        "hot_handout_times": stats.hot_handouts().iter().map(|(t, a)| json!([round2((t.saturating_sub(run_start_ms)) as f64 / 1000.0), a])).collect::<Vec<_>>(),
        "ack_rejections": cn.ack_rejected.load(Ordering::Relaxed),
        "hot_ack_rejections": cn.hot_ack_rejected.load(Ordering::Relaxed),
        "acks_ok": cn.ack_ok.load(Ordering::Relaxed),
        "start_errors": driver.start_errors.load(Ordering::Relaxed),
        "fetch": fetch_json(&fetches),
        "steadfast_diagnostics": if built.steadfast.is_some() { json!(diagnostics) } else { Value::Null },
    });
    common::teardown(env, built).await;
    stopped?;
    if total_completed == 0 {
        anyhow::bail!(
            "{} {}: no healthy orchestration completed in {:.1} s",
            kind.name(),
            topo.name(),
            elapsed.as_secs_f64()
        );
    }
    if with_hot && cn.hot_fetches.load(Ordering::Relaxed) == 0 {
        anyhow::bail!(
            "{} {}: the hot instance was never handed out",
            kind.name(),
            topo.name()
        );
    }
    Ok(result)
}

pub async fn run(env: &Env, kinds: &[Kind]) -> Result<Value> {
    let c = cfg(env);
    let mut topologies = Vec::new();
    for &topo in &env.livelock_topologies {
        topologies.push(run_topology(env, kinds, topo, &cfg_for(env, topo)).await?);
    }
    Ok(json!({
        "max_attempts": MAX_ATTEMPTS,
        "healthy_in_flight": IN_FLIGHT,
        "fetch_overrun_ms": OVERRUN.as_millis() as u64,
        "warmup_s": c.warmup.as_secs_f64(),
        "polling": "short (dispatcher_long_poll_timeout = 0, dispatcher_min_poll_interval = 100 ms)",
        "steadfast_redelivery_backoff": common::backoff_json(),
        "topologies": topologies,
    }))
}

async fn run_topology(env: &Env, kinds: &[Kind], topo: Topology, c: &Cfg) -> Result<Value> {
    let mut variants = Vec::new();
    for &lease in &c.leases {
        let bound = expected_bound(lease);
        progress(&format!(
            "livelock {}: lease {} s, {} dispatchers, max_attempts {MAX_ATTEMPTS}; lease-honouring bound for the hot instance {:.1} s",
            topo.name(),
            lease.as_secs_f64(),
            topo.dispatchers(),
            bound.as_secs_f64()
        ));
        let mut per = serde_json::Map::new();
        for &kind in kinds {
            progress(&format!(
                "livelock {} {}: baseline (no hot instance)",
                topo.name(),
                kind.name()
            ));
            let base = one_run(env, kind, topo, lease, false, c).await?;
            progress(&format!(
                "livelock {} {}: baseline {} healthy/s, fetch p99 {} ms",
                topo.name(),
                kind.name(),
                base["healthy_per_s"],
                base["fetch"]["all"]["p99_ms"]
            ));
            progress(&format!(
                "livelock {} {}: with the hot instance",
                topo.name(),
                kind.name()
            ));
            let hot = one_run(env, kind, topo, lease, true, c).await?;
            let rel = ratio(
                hot["healthy_per_s"].as_f64().unwrap_or(0.0),
                base["healthy_per_s"].as_f64().unwrap_or(0.0),
            );
            progress(&format!(
                "livelock {} {}: hot terminal {}, max attempt {}, healthy {}/s = {} of baseline, fetch p99 {} ms, ack rejections {}",
                topo.name(),
                kind.name(),
                match hot["hot_terminal_after_s"].as_f64() {
                    Some(t) => format!("after {t:.1} s"),
                    None => "never".into(),
                },
                hot["hot_max_attempt_count"],
                hot["healthy_per_s"],
                rel,
                hot["fetch"]["all"]["p99_ms"],
                hot["ack_rejections"],
            ));
            per.insert(
                kind.name().into(),
                json!({ "baseline": base, "hot": hot, "healthy_throughput_vs_baseline": rel }),
            );
        }
        let cmp = |k: &str| -> Value {
            let get = |p: &str| per.get(p).map(|v| v["hot"].clone());
            match (get("steadfast"), get("duroxide-pg")) {
                (Some(s), Some(d)) => match k {
                    "fetch_p99_ms" => ratio(
                        d["fetch"]["all"]["p99_ms"].as_f64().unwrap_or(0.0),
                        s["fetch"]["all"]["p99_ms"].as_f64().unwrap_or(0.0),
                    ),
                    _ => ratio(
                        s["healthy_per_s"].as_f64().unwrap_or(0.0),
                        d["healthy_per_s"].as_f64().unwrap_or(0.0),
                    ),
                },
                _ => Value::Null,
            }
        };
        let ratios = json!({
            "healthy_per_s_steadfast_over_duroxide_pg": cmp("healthy"),
            "fetch_p99_duroxide_pg_over_steadfast": cmp("fetch_p99_ms"),
        });
        variants.push(json!({
            "lease_s": lease.as_secs_f64(),
            "lease_honouring_bound_s": round2(bound.as_secs_f64()),
            "target_terminal_within_s": round2(bound.as_secs_f64() + 2.0),
            "providers": per,
            "ratios": ratios,
        }));
    }
    Ok(json!({
        "topology": topo.name(),
        "dispatchers": topo.dispatchers(),
        "processes": topo.processes,
        "dispatchers_per_process": topo.dispatchers_per_process,
        "worker_dispatchers": topo.processes * topo.workers_per_process(),
        "variants": variants,
    }))
}
