//! Scenario 7: one instance's backlog. One instance is held by a lease nobody acks (claimed
//! straight from the provider with a 10-minute lock, as a worker that hangs would hold it)
//! while `BACKLOG` events are queued for it, older than all other work; then 32
//! orchestration and 32 worker dispatchers run the trivial closed loop (64 one-activity
//! orchestrations in flight) beside it, once with short polls and once with long polls.
//! Reported: the latency of fetches that returned an item (every one a claim of another
//! instance) and orchestrations/s, each beside the same runs with an empty backlog (the
//! baseline, same leased instance). The target is read off the short-poll window
//! (`dispatcher_long_poll_timeout` = 0), where a fetch is one claim round on both
//! providers (duroxide-pg always short-polls), as in the livelock and contention
//! scenarios; with long polls a steadfast fetch that returned an item also includes its
//! wait for work. A CHECKPOINT after the fill keeps its writes out of the measured windows.
//! Issue 9's target: p99 < 50 ms with 300 000 messages queued.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use duroxide::Client;
use duroxide::RuntimeOptions;
use duroxide::providers::Provider;
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::common::{self, Env, Kind, MAX_ATTEMPTS, NOOP, progress, ratio, round2};
use crate::driver::ClosedLoop;

use crate::probe::Probe;

const DISPATCHERS: usize = 32;
const IN_FLIGHT: usize = 64;
const HOG: &str = "backlog-hog";

struct Cfg {
    backlog: usize,
    warmup: Duration,
    window: Duration,
}

fn cfg(env: &Env) -> Cfg {
    if env.smoke {
        Cfg {
            backlog: 2_000,
            warmup: Duration::from_millis(500),
            window: Duration::from_millis(1500),
        }
    } else {
        Cfg {
            backlog: 300_000,
            warmup: Duration::from_secs(2),
            window: Duration::from_secs(10),
        }
    }
}

async fn one(env: &Env, kind: Kind, backlog: usize, c: &Cfg) -> Result<Value> {
    let built = common::build(env, kind, "backlog").await?;
    let provider = built.provider.clone();
    let client = Arc::new(Client::new(provider.clone()));
    client.start_orchestration(HOG, NOOP, "x").await?;
    let (item, _token, _) = provider
        .fetch_orchestration_item(Duration::from_secs(600), Duration::ZERO, None)
        .await
        .map_err(|e| anyhow::anyhow!("claim the hog: {e}"))?
        .context("the hog's start was not claimable")?;
    anyhow::ensure!(
        item.instance == HOG,
        "claimed {} instead of the hog",
        item.instance
    );

    let filled = Instant::now();
    let raised = futures_util::stream::iter(0..backlog)
        .map(|n| {
            let client = client.clone();
            async move { client.raise_event(HOG, &format!("e{n}"), "1").await }
        })
        .buffer_unordered(16)
        .filter(|r| std::future::ready(r.is_err()))
        .count()
        .await;
    anyhow::ensure!(
        raised == 0,
        "{raised} of the backlog's events failed to enqueue"
    );
    let fill_s = filled.elapsed().as_secs_f64();
    // The fill's dirty pages are written out now, not during the measured window.
    let admin = common::admin_pool(env).await?;
    sqlx::query("CHECKPOINT").execute(&admin).await?;
    admin.close().await;
    progress(&format!(
        "  {}: {} events queued for the leased instance in {fill_s:.1} s",
        kind.name(),
        backlog
    ));

    let mut windows = serde_json::Map::new();
    for (label, long_poll) in POLLING {
        let w = window(env, &provider, label, long_poll, c).await;
        windows.insert(label.into(), w);
    }
    let v = json!({
        "provider": kind.name(),
        "backlog_messages": backlog,
        "backlog_fill_s": round2(fill_s),
        "polling": windows,
    });
    common::teardown(env, built).await;
    // Without a backlog nothing completing is a broken run; with one it is the finding.
    for (label, _) in POLLING {
        if backlog == 0 && v["polling"][label]["orchestrations"].as_u64() == Some(0) {
            anyhow::bail!("{} ({label}): no orchestration completed", kind.name());
        }
    }
    Ok(v)
}

/// The measured windows: short polls (the target's), then long polls, with the
/// runtime's `dispatcher_long_poll_timeout` for each.
const POLLING: [(&str, Duration); 2] =
    [("short", Duration::ZERO), ("long", Duration::from_secs(5))];

/// One closed-loop window beside the leased instance, on a runtime started for it.
async fn window(
    env: &Env,
    provider: &Arc<dyn Provider>,
    label: &str,
    long_poll: Duration,
    c: &Cfg,
) -> Value {
    let (probe, rx) = Probe::reporting(provider.clone());
    let stats = probe.stats.clone();
    let rt = common::start_runtime(
        probe.clone(),
        RuntimeOptions {
            max_attempts: MAX_ATTEMPTS,
            orchestration_concurrency: DISPATCHERS,
            worker_concurrency: DISPATCHERS,
            dispatcher_long_poll_timeout: long_poll,
            ..RuntimeOptions::default()
        },
    )
    .await;
    let t0 = stats.now_ms();
    let driver = ClosedLoop::spawn(
        Arc::new(Client::new(probe.clone())),
        format!("b-{label}"),
        IN_FLIGHT,
        rx,
    );
    let measured = driver.run_window(&stats, t0, c.warmup, c.window).await;
    let (from, done, secs) = (measured.from_ms, measured.completed, measured.secs);
    rt.shutdown(Some(env.shutdown_grace_ms())).await;
    json!({
        "dispatcher_long_poll_timeout_ms": long_poll.as_millis() as u64,
        "window_s": round2(secs),
        "orchestrations": done,
        "orchestrations_per_s": round2(done as f64 / secs),
        "start_errors": driver.start_errors.load(std::sync::atomic::Ordering::Relaxed),
        "fetch": common::fetch_json(&stats.fetches_since(from)),
    })
}

pub async fn run(env: &Env, kinds: &[Kind]) -> Result<Value> {
    let c = cfg(env);
    let mut per = serde_json::Map::new();
    for &kind in kinds {
        progress(&format!(
            "backlog {}: {} messages for one leased instance, {DISPATCHERS} dispatchers beside it",
            kind.name(),
            c.backlog
        ));
        let mut runs = serde_json::Map::new();
        for (label, backlog) in [("baseline", 0), ("with_backlog", c.backlog)] {
            let v = one(env, kind, backlog, &c).await?;
            for (polling, _) in POLLING {
                let w = &v["polling"][polling];
                progress(&format!(
                    "backlog {} {label}, {polling} polls: claims of other instances p50 {} / p99 {} / max {} ms, {} orchestrations/s",
                    kind.name(),
                    w["fetch"]["found_calls"]["p50_ms"],
                    w["fetch"]["found_calls"]["p99_ms"],
                    w["fetch"]["found_calls"]["max_ms"],
                    w["orchestrations_per_s"],
                ));
            }
            runs.insert(label.into(), v);
        }
        let at = |label: &str, polling: &str, key: &str| match key {
            "p99" => runs[label]["polling"][polling]["fetch"]["found_calls"]["p99_ms"]
                .as_f64()
                .unwrap_or(0.0),
            _ => runs[label]["polling"][polling]["orchestrations_per_s"]
                .as_f64()
                .unwrap_or(0.0),
        };
        let mut compared = serde_json::Map::new();
        for (polling, _) in POLLING {
            compared.insert(
                polling.into(),
                json!({
                    "found_fetch_p99_with_over_without":
                        ratio(at("with_backlog", polling, "p99"), at("baseline", polling, "p99")),
                    "orchestrations_per_s_with_over_without":
                        ratio(at("with_backlog", polling, "rate"), at("baseline", polling, "rate")),
                }),
            );
        }
        let v = json!({
            "baseline": runs["baseline"],
            "with_backlog": runs["with_backlog"],
            "with_over_without": compared,
        });
        per.insert(kind.name().into(), v);
    }
    let ratios = match (per.get("steadfast"), per.get("duroxide-pg")) {
        (Some(s), Some(d)) => {
            let with = |v: &Value, polling: &str, key: &str| {
                v["with_backlog"]["polling"][polling][key].clone()
            };
            let mut r = serde_json::Map::new();
            for (polling, _) in POLLING {
                let p99 = |v: &Value| {
                    with(v, polling, "fetch")["found_calls"]["p99_ms"]
                        .as_f64()
                        .unwrap_or(0.0)
                };
                let rate = |v: &Value| {
                    with(v, polling, "orchestrations_per_s")
                        .as_f64()
                        .unwrap_or(0.0)
                };
                r.insert(
                    polling.into(),
                    json!({
                        "found_fetch_p99_duroxide_pg_over_steadfast": ratio(p99(d), p99(s)),
                        "orchestrations_per_s_steadfast_over_duroxide_pg": ratio(rate(s), rate(d)),
                    }),
                );
            }
            Value::Object(r)
        }
        _ => Value::Null,
    };
    Ok(json!({
        "dispatchers": DISPATCHERS,
        "in_flight": IN_FLIGHT,
        "target": "found-fetch p99 < 50 ms with 300 000 messages queued, short polls (issue 9)",
        "providers": per,
        "ratios": ratios,
    }))
}
