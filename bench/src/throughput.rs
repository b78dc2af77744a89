//! Scenario 3: throughput at 1, 2, 4, 8, 16 and 32 dispatchers (N orchestration and N
//! worker dispatchers), runtime defaults otherwise (long polling for steadfast; duroxide-pg
//! ignores the poll timeout and short-polls every `dispatcher_min_poll_interval`).
//!
//! - `trivial`: a closed loop keeps 64 one-activity orchestrations in flight; orchestrations/s
//!   counted from completing acks after a warm-up (activities/s is the same number).
//! - `stress`: duroxide's own provider stress workload
//!   (`duroxide::provider_stress_tests::run_stress_test`: 20 concurrent fan-out
//!   orchestrations of 5 activities of 10 ms), its own orchestrations/s and activities/s.
//!
//! The trivial workload also runs on duroxide's in-memory SQLite provider (the runtime's
//! own floor), and records CPU per orchestration (this process; the `postgres`
//! processes) over the window and, for steadfast, the database's transactions and rows
//! written per orchestration.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use duroxide::provider_stress_tests::{
    StressTestConfig, create_default_activities, create_default_orchestrations, run_stress_test,
};
use duroxide::{Client, RuntimeOptions};
use serde_json::{Value, json};

use crate::common::{self, Env, Kind, MAX_ATTEMPTS, progress, ratio, round2};
use crate::driver::ClosedLoop;

use crate::claim_counts;
use crate::probe::Probe;
use crate::statements;

const IN_FLIGHT: usize = 64;

struct Cfg {
    dispatchers: Vec<usize>,
    warmup: Duration,
    window: Duration,
    stress_secs: u64,
}

fn cfg(env: &Env) -> Cfg {
    let mut c = default_cfg(env);
    if let Some(list) = &env.throughput_dispatchers {
        c.dispatchers = list.clone();
    }
    c
}

fn default_cfg(env: &Env) -> Cfg {
    if env.smoke {
        Cfg {
            dispatchers: vec![2],
            warmup: Duration::from_millis(500),
            window: Duration::from_millis(1000),
            stress_secs: 1,
        }
    } else {
        Cfg {
            dispatchers: vec![1, 2, 4, 8, 16, 32],
            warmup: Duration::from_secs(1),
            window: Duration::from_secs(5),
            stress_secs: 5,
        }
    }
}

/// The runtime's own floor: duroxide with its in-memory SQLite provider, same workload.
const FLOOR: &str = "duroxide-sqlite-memory";

async fn build_trivial(env: &Env, provider: &str, n: usize) -> Result<common::Built> {
    match Kind::from_name(provider) {
        Some(kind) => common::build(env, kind, &format!("tp{n}")).await,
        None => Ok(common::Built {
            schema: common::unique_schema(env, "floor_unused"),
            provider: Arc::new(duroxide::providers::sqlite::SqliteProvider::new_in_memory().await?),
            steadfast: None,
        }),
    }
}

/// The runtime's defaults (long polling) with `dispatchers` orchestration and `workers`
/// worker dispatchers and the bench's attempt ceiling: the throughput workload's runtime,
/// in this process or in child processes (`fleet.rs`).
pub(crate) fn runtime_options(dispatchers: usize, workers: usize) -> RuntimeOptions {
    RuntimeOptions {
        max_attempts: MAX_ATTEMPTS,
        orchestration_concurrency: dispatchers,
        worker_concurrency: workers,
        ..RuntimeOptions::default()
    }
}

async fn trivial(env: &Env, provider: &str, n: usize, c: &Cfg) -> Result<Value> {
    let built = build_trivial(env, provider, n).await?;
    let (probe, rx) = Probe::reporting(built.provider.clone());
    let stats = probe.stats.clone();
    let statements_counted = built.steadfast.is_some() && statements::reset(env).await;
    let claims_before = claim_counts::totals();
    let work_before = common::db_work(env, &built.schema).await?;
    let client = Arc::new(Client::new(probe.clone()));
    let rt = common::start_runtime(probe.clone(), runtime_options(n, n)).await;
    let t0 = stats.now_ms();
    let driver = ClosedLoop::spawn(client, "t".into(), IN_FLIGHT, rx);
    let started = Instant::now();
    tokio::time::sleep(c.warmup).await;
    let cpu_from = common::cpu_seconds();
    tokio::time::sleep(c.window).await;
    let cpu_to = common::cpu_seconds();
    let end = stats.now_ms();
    driver.stop();
    let from = t0 + c.warmup.as_millis() as u32;
    let done = stats.completions_between(from, end);
    let secs = (end - from) as f64 / 1000.0;
    // CPU per orchestration over the measured window (the server's backends die with
    // their connections, so a pool that shrank mid-window under-counts the server).
    let cpu = match (cpu_from, cpu_to) {
        (Some((a, b)), Some((c2, d))) if done > 0 => json!({
            "bench_process_ms": round2((c2 - a) * 1000.0 / done as f64),
            "postgres_ms": round2((d - b) * 1000.0 / done as f64),
            "machine_busy_fraction": round2(((c2 - a) + (d - b)) / secs / num_cpus()),
        }),
        _ => Value::Null,
    };
    let elapsed = started.elapsed();
    rt.shutdown(Some(env.shutdown_grace_ms())).await;
    let cn = &stats.counters;
    let total = cn.completed.load(Ordering::Relaxed);
    let per_orchestration =
        match common::db_work_per_orchestration(env, &built, work_before, total).await? {
            Some(mut work) => {
                let claims =
                    claim_counts::per_orchestration(&claims_before, &claim_counts::totals(), total);
                work.insert("claims".into(), claims);
                let statements = if statements_counted {
                    statements::per_orchestration(env, total).await
                } else {
                    Value::Null
                };
                work.insert("statements".into(), statements);
                Value::Object(work)
            }
            // duroxide-pg's pool cannot be closed from here, so its counters may be unreported.
            None => Value::Null,
        };
    let v = json!({
        "dispatchers": n,
        "orchestrations": done,
        "window_s": round2(secs),
        "orchestrations_per_s": round2(done as f64 / secs),
        "activities_per_s": round2(done as f64 / secs),
        "ack_rejections": cn.ack_rejected.load(Ordering::Relaxed),
        "start_errors": driver.start_errors.load(Ordering::Relaxed),
        "run_s": round2(elapsed.as_secs_f64()),
        "database_work_per_orchestration": per_orchestration,
        "cpu_per_orchestration": cpu,
        "worker_fetch_found": cn.worker_fetch_found.load(Ordering::Relaxed),
        "worker_fetch_empty": cn.worker_fetch_empty.load(Ordering::Relaxed),
        // Long polling: a fetch's wall time includes waiting for work, so only the count
        // of calls and the latency of those that returned an item mean much here.
        "fetch": crate::common::fetch_json(&stats.fetches_since(from)),
    });
    common::teardown(env, built).await;
    if total == 0 {
        anyhow::bail!("{provider} x{n}: no orchestration completed");
    }
    Ok(v)
}

async fn stress(env: &Env, kind: Kind, n: usize, c: &Cfg) -> Result<Value> {
    let built = common::build(env, kind, &format!("st{n}")).await?;
    let config = StressTestConfig {
        duration_secs: c.stress_secs,
        orch_concurrency: n,
        worker_concurrency: n,
        ..StressTestConfig::default()
    };
    let r = run_stress_test(
        config.clone(),
        built.provider.clone(),
        create_default_activities(config.activity_delay_ms),
        create_default_orchestrations(),
    )
    .await
    .map_err(|e| anyhow::anyhow!("stress test: {e}"));
    common::teardown(env, built).await;
    let r = r?;
    if r.completed == 0 {
        anyhow::bail!("{} x{n}: stress workload completed nothing", kind.name());
    }
    Ok(json!({
        "dispatchers": n,
        "launched": r.launched,
        "completed": r.completed,
        "failed": r.failed,
        "total_time_s": round2(r.total_time.as_secs_f64()),
        "orchestrations_per_s": round2(r.orch_throughput),
        "activities_per_s": round2(r.activity_throughput),
        "config": config,
    }))
}

pub async fn run(env: &Env, kinds: &[Kind]) -> Result<Value> {
    let c = cfg(env);
    let mut out = serde_json::Map::new();
    for (workload, label) in [
        ("trivial", "one-activity orchestration"),
        ("stress", "duroxide provider stress workload"),
    ] {
        let mut per = serde_json::Map::new();
        for &kind in kinds {
            let mut rows = Vec::new();
            for &n in &c.dispatchers {
                let v = if workload == "trivial" {
                    trivial(env, kind.name(), n, &c).await?
                } else {
                    stress(env, kind, n, &c).await?
                };
                progress(&format!(
                    "throughput {workload} ({label}) {} x{n}: {} orch/s, {} activities/s, per orchestration {}",
                    kind.name(),
                    v["orchestrations_per_s"],
                    v["activities_per_s"],
                    v.get("database_work_per_orchestration")
                        .unwrap_or(&Value::Null)
                ));
                rows.push(v);
            }
            per.insert(kind.name().into(), Value::Array(rows));
        }
        if workload == "trivial" {
            let mut rows = Vec::new();
            for &n in &c.dispatchers {
                let v = trivial(env, FLOOR, n, &c).await?;
                progress(&format!(
                    "throughput trivial floor ({FLOOR}) x{n}: {} orch/s, cpu per orchestration {}",
                    v["orchestrations_per_s"], v["cpu_per_orchestration"]
                ));
                rows.push(v);
            }
            per.insert(FLOOR.into(), Value::Array(rows));
        }
        let ratios = common::ratios_by_dispatchers(&per);
        out.insert(
            workload.into(),
            json!({ "providers": per, "ratios": ratios }),
        );
    }
    out.insert("in_flight_trivial".into(), json!(IN_FLIGHT));
    out.insert("dispatchers".into(), json!(c.dispatchers));
    Ok(Value::Object(out))
}

/// steadfast's best trivial throughput against the database's claim+ack ceiling. One
/// trivial orchestration costs 3 queue jobs (start turn, activity, completing turn).
pub fn versus_ceiling(throughput: &Value, ceiling: &Value) -> Value {
    let best = |p: &str| {
        throughput["trivial"]["providers"][p]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| r["orchestrations_per_s"].as_f64())
                    .fold(0.0, f64::max)
            })
    };
    let ceil = ceiling["claim_ack_jobs_per_s"].as_f64().unwrap_or(0.0);
    let mut v = serde_json::Map::new();
    v.insert("ceiling_claim_ack_jobs_per_s".into(), json!(ceil));
    v.insert("jobs_per_trivial_orchestration".into(), json!(3));
    for p in ["steadfast", "duroxide-pg"] {
        if let Some(b) = best(p) {
            v.insert(
                p.into(),
                json!({
                    "best_trivial_orchestrations_per_s": b,
                    "queue_jobs_per_s": round2(b * 3.0),
                    "fraction_of_ceiling": ratio(b * 3.0, ceil),
                }),
            );
        }
    }
    Value::Object(v)
}

fn num_cpus() -> f64 {
    std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64)
}
