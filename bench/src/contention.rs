//! Scenario 2: hot-instance contention. 32 orchestration dispatchers, 4 instances, each
//! receiving a stream of messages: each instance fans out 8 no-op activities, joins them,
//! 4 rounds, then continues as new, forever; 16 worker dispatchers complete the activities
//! as fast as they can, so every instance always has new completions queued while one
//! dispatcher holds it and the other 31 keep asking. Short polling, as in scenario 1, so a
//! fetch call is one claim. Reported: fetch latency (all calls, calls that returned an item,
//! empty calls), the fraction of empty calls, messages consumed per second.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::Result;
use duroxide::{Client, RuntimeOptions};
use serde_json::{Value, json};

use crate::common::{
    self, Env, HOT_FANOUT, Kind, MAX_ATTEMPTS, fetch_json, progress, ratio, round2,
};
use steadfast_pg::Layered;

use crate::probe::Probe;

const DISPATCHERS: usize = 32;
const WORKERS: usize = 16;
const INSTANCES: usize = 4;
const FANOUT: usize = 8;
const ROUNDS: usize = 4;

fn window(env: &Env) -> (Duration, Duration) {
    if env.smoke {
        (Duration::from_millis(500), Duration::from_millis(1500))
    } else {
        (Duration::from_secs(2), Duration::from_secs(20))
    }
}

async fn one(env: &Env, kind: Kind) -> Result<Value> {
    let (warmup, measure) = window(env);
    let built = common::build(env, kind, "hot").await?;
    let probe = Arc::new(Layered(Probe::new(
        built.provider.clone(),
        None,
        Duration::ZERO,
        None,
    )));
    let stats = probe.stats.clone();
    let client = Client::new(probe.clone());
    for i in 0..INSTANCES {
        client
            .start_orchestration(format!("hot-{i}"), HOT_FANOUT, format!("{FANOUT}x{ROUNDS}"))
            .await?;
    }
    let rt = common::start_runtime(
        probe.clone(),
        RuntimeOptions {
            max_attempts: MAX_ATTEMPTS,
            orchestration_concurrency: DISPATCHERS,
            worker_concurrency: WORKERS,
            dispatcher_long_poll_timeout: Duration::ZERO,
            ..RuntimeOptions::default()
        },
    )
    .await;
    let t0 = stats.now_ms();
    let started = Instant::now();
    tokio::time::sleep(warmup).await;
    let from = stats.now_ms();
    let m0 = stats.counters.messages_acked.load(Ordering::Relaxed);
    let a0 = stats.counters.ack_ok.load(Ordering::Relaxed);
    let mut next = Duration::from_secs(5);
    while started.elapsed() < warmup + measure {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if started.elapsed() >= next + warmup {
            next += Duration::from_secs(5);
            progress(&format!(
                "  {}: {:.0} s, messages consumed {}",
                kind.name(),
                started.elapsed().as_secs_f64(),
                stats.counters.messages_acked.load(Ordering::Relaxed) - m0
            ));
        }
    }
    let to = stats.now_ms();
    let m1 = stats.counters.messages_acked.load(Ordering::Relaxed);
    let a1 = stats.counters.ack_ok.load(Ordering::Relaxed);
    rt.shutdown(Some(env.shutdown_grace_ms())).await;
    let secs = (to - from) as f64 / 1000.0;
    let samples: Vec<_> = stats
        .fetches()
        .into_iter()
        .filter(|s| s.at_ms >= from && s.at_ms < to)
        .collect();
    let cn = &stats.counters;
    let v = json!({
        "provider": kind.name(),
        "window_s": round2(secs),
        "warmup_s": round2((from - t0) as f64 / 1000.0),
        "messages_consumed_per_s": round2((m1 - m0) as f64 / secs),
        "turns_per_s": round2((a1 - a0) as f64 / secs),
        "fetch_calls_per_s": round2(samples.len() as f64 / secs),
        "ack_rejections": cn.ack_rejected.load(Ordering::Relaxed),
        "fetch": fetch_json(&samples),
    });
    common::teardown(env, built).await;
    if m1 == 0 {
        anyhow::bail!("{}: no message consumed", kind.name());
    }
    Ok(v)
}

pub async fn run(env: &Env, kinds: &[Kind]) -> Result<Value> {
    let mut per = serde_json::Map::new();
    for &kind in kinds {
        progress(&format!(
            "contention {}: {DISPATCHERS} dispatchers, {INSTANCES} hot instances",
            kind.name()
        ));
        let v = one(env, kind).await?;
        progress(&format!(
            "contention {}: fetch p50 {} / p99 {} / max {} ms, {:.0}% empty, {} messages/s, {} turns/s",
            kind.name(),
            v["fetch"]["all"]["p50_ms"],
            v["fetch"]["all"]["p99_ms"],
            v["fetch"]["all"]["max_ms"],
            v["fetch"]["empty_fraction"].as_f64().unwrap_or(0.0) * 100.0,
            v["messages_consumed_per_s"],
            v["turns_per_s"],
        ));
        per.insert(kind.name().into(), v);
    }
    let ratios = match (per.get("steadfast"), per.get("duroxide-pg")) {
        (Some(s), Some(d)) => json!({
            "fetch_p99_duroxide_pg_over_steadfast": ratio(
                d["fetch"]["all"]["p99_ms"].as_f64().unwrap_or(0.0),
                s["fetch"]["all"]["p99_ms"].as_f64().unwrap_or(0.0)),
            "messages_per_s_steadfast_over_duroxide_pg": ratio(
                s["messages_consumed_per_s"].as_f64().unwrap_or(0.0),
                d["messages_consumed_per_s"].as_f64().unwrap_or(0.0)),
        }),
        _ => Value::Null,
    };
    Ok(json!({
        "dispatchers": DISPATCHERS,
        "worker_dispatchers": WORKERS,
        "instances": INSTANCES,
        "fanout": FANOUT,
        "rounds_per_execution": ROUNDS,
        "polling": "short (dispatcher_long_poll_timeout = 0, dispatcher_min_poll_interval = 100 ms)",
        "providers": per,
        "ratios": ratios,
    }))
}
