//! The Rust side of scenario 5 (binding overhead): the same trivial one-activity
//! orchestration and closed loop as `bench/node/bench.mjs` runs through the Node binding,
//! written directly against duroxide and steadfast-pg. Started by `bench.mjs`, never by
//! hand; prints one JSON object on stdout.
//!
//! Mirrors what the binding does for `new Runtime(await PostgresProvider.connectWithOptions(
//! { url, schema, maxConnections }), { orchestrationConcurrency, workerConcurrency,
//! maxAttempts, logLevel })`: the client uses the provider's pool; the runtime opens its own
//! pool with the same options plus `claim.max_attempts = maxAttempts`; every other runtime
//! option keeps duroxide's default. Completions are observed the same way too: each of the
//! `in_flight` loops starts an instance and waits for it with steadfast-pg's
//! `PostgresProvider::wait_for_orchestration` (what `client.waitForOrchestration` calls on
//! PostgreSQL: woken by the execution-end notification, not polling).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use duroxide::runtime::registry::ActivityRegistry;
use duroxide::runtime::{LogFormat, Runtime, RuntimeOptions};
use duroxide::{
    ActivityContext, Client, OrchestrationContext, OrchestrationRegistry, OrchestrationStatus,
};
use serde_json::json;
use steadfast_pg::{PollingMode, PostgresProvider, ProviderOptions};

const USAGE: &str = "\
usage: steadfast-node-baseline --schema NAME --dispatchers N --in-flight N --warmup-ms MS
                               --window-ms MS --until-first-ms MS --pool N --max-attempts N
                               --log-level LEVEL [--polling listen|session-free]
The database URL is read from STEADFAST_BENCH_DATABASE_URL. With --until-first-ms > 0 the
loop goes on past the window until something completed, at most that long from the start.";

struct Args {
    database_url: String,
    schema: String,
    dispatchers: usize,
    in_flight: usize,
    warmup: Duration,
    window: Duration,
    until_first: Duration,
    pool: u32,
    max_attempts: u32,
    log_level: String,
    polling: PollingMode,
}

fn parse_args() -> Result<Args> {
    let mut named = std::collections::HashMap::new();
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let Some(name) = flag.strip_prefix("--") else {
            bail!("unexpected argument {flag:?}\n{USAGE}");
        };
        let value = it
            .next()
            .with_context(|| format!("--{name} needs a value"))?;
        named.insert(name.to_string(), value);
    }
    let mut take = |name: &str| -> Result<String> {
        named
            .remove(name)
            .with_context(|| format!("--{name} is required\n{USAGE}"))
    };
    let number = |name: &str, v: String| -> Result<u64> {
        v.parse()
            .with_context(|| format!("--{name} must be a non-negative integer (got {v:?})"))
    };
    let args = Args {
        database_url: std::env::var("STEADFAST_BENCH_DATABASE_URL")
            .context("STEADFAST_BENCH_DATABASE_URL is not set")?,
        schema: take("schema")?,
        dispatchers: number("dispatchers", take("dispatchers")?)? as usize,
        in_flight: number("in-flight", take("in-flight")?)? as usize,
        warmup: Duration::from_millis(number("warmup-ms", take("warmup-ms")?)?),
        window: Duration::from_millis(number("window-ms", take("window-ms")?)?),
        until_first: Duration::from_millis(number("until-first-ms", take("until-first-ms")?)?),
        pool: number("pool", take("pool")?)? as u32,
        max_attempts: number("max-attempts", take("max-attempts")?)? as u32,
        log_level: take("log-level")?,
        polling: match named.remove("polling").as_deref() {
            None | Some("listen") => PollingMode::Listen,
            Some("session-free") => PollingMode::SessionFree,
            Some(other) => bail!("--polling must be listen or session-free (got {other:?})"),
        },
    };
    if let Some(extra) = named.keys().next() {
        bail!("unknown option --{extra}\n{USAGE}");
    }
    Ok(args)
}

fn registries() -> (ActivityRegistry, OrchestrationRegistry) {
    let activities = ActivityRegistry::builder()
        .register("Noop", |_ctx: ActivityContext, input: String| async move {
            Ok(input)
        })
        .build();
    let orchestrations = OrchestrationRegistry::builder()
        .register(
            "Trivial",
            |ctx: OrchestrationContext, input: String| async move {
                ctx.schedule_activity("Noop", input).await
            },
        )
        .build();
    (activities, orchestrations)
}

/// Completion times (ms since the start) and start-to-completion latencies (µs).
#[derive(Default)]
struct Samples {
    done_at_ms: Vec<u64>,
    latency_us: Vec<u64>,
    failures: u64,
}

async fn run(a: Args) -> Result<serde_json::Value> {
    let mut options = ProviderOptions::new(a.database_url.clone()).with_schema(a.schema.clone());
    options.max_connections = a.pool;
    options.polling = a.polling;
    let client_provider = Arc::new(
        PostgresProvider::connect_with_options(options.clone())
            .await
            .context("connect the client's provider")?,
    );
    options.claim.max_attempts = Some(a.max_attempts);
    let runtime_provider = Arc::new(
        PostgresProvider::connect_with_options(options)
            .await
            .context("connect the runtime's provider")?,
    );
    let mut ro = RuntimeOptions {
        orchestration_concurrency: a.dispatchers,
        worker_concurrency: a.dispatchers,
        max_attempts: a.max_attempts,
        ..RuntimeOptions::default()
    };
    ro.observability.log_format = LogFormat::Pretty;
    ro.observability.log_level = a.log_level.clone();
    let (activities, orchestrations) = registries();
    let rt =
        Runtime::start_with_options(runtime_provider.clone(), activities, orchestrations, ro).await;
    let client = Arc::new(Client::new(client_provider.clone()));

    let started = Instant::now();
    let end = started + a.warmup + a.window;
    let hard_end = started + a.until_first.max(a.warmup + a.window);
    let samples = Arc::new(Mutex::new(Samples::default()));
    let running = {
        let samples = samples.clone();
        move || {
            let now = Instant::now();
            now < end || (samples.lock().unwrap().done_at_ms.is_empty() && now < hard_end)
        }
    };
    let mut loops = tokio::task::JoinSet::new();
    for lane in 0..a.in_flight {
        let (client, samples, running) = (client.clone(), samples.clone(), running.clone());
        let waiter = client_provider.clone();
        loops.spawn(async move {
            let mut n = 0u64;
            while running() {
                let id = format!("r{lane}-{n}");
                n += 1;
                let t0 = Instant::now();
                let ok = client
                    .start_orchestration(&id, "Trivial", "x")
                    .await
                    .is_ok()
                    && matches!(
                        waiter
                            .wait_for_orchestration(&id, Duration::from_secs(60))
                            .await,
                        Ok(OrchestrationStatus::Completed { .. })
                    );
                let mut s = samples.lock().unwrap();
                if ok {
                    s.done_at_ms.push(started.elapsed().as_millis() as u64);
                    s.latency_us.push(t0.elapsed().as_micros() as u64);
                } else {
                    s.failures += 1;
                }
            }
        });
    }
    tokio::time::sleep_until(end.into()).await;
    while running() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let from = a.warmup.as_millis() as u64;
    let to = from + a.window.as_millis() as u64;
    let summary = {
        let s = samples.lock().unwrap();
        let in_window: Vec<usize> = (0..s.done_at_ms.len())
            .filter(|&i| (from..to).contains(&s.done_at_ms[i]))
            .collect();
        let mut lat: Vec<u64> = in_window.iter().map(|&i| s.latency_us[i]).collect();
        lat.sort_unstable();
        let pct = |p: f64| -> f64 {
            if lat.is_empty() {
                return 0.0;
            }
            let rank = ((p / 100.0) * lat.len() as f64).ceil() as usize;
            lat[rank.clamp(1, lat.len()) - 1] as f64 / 1000.0
        };
        let secs = a.window.as_secs_f64();
        json!({
            "implementation": "rust",
            "dispatchers": a.dispatchers,
            "in_flight": a.in_flight,
            "orchestrations": in_window.len(),
            "window_s": secs,
            "orchestrations_per_s": (in_window.len() as f64 / secs * 100.0).round() / 100.0,
            "latency_ms": { "p50": pct(50.0), "p99": pct(99.0), "max": pct(100.0) },
            "completed_total": s.done_at_ms.len(),
            "failures": s.failures,
        })
    };
    loops.abort_all();
    rt.shutdown(Some(1000)).await;
    client_provider.close().await;
    runtime_provider.close().await;
    Ok(summary)
}

fn main() -> std::process::ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("steadfast-node-baseline: {e:#}");
            return std::process::ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("steadfast-node-baseline: tokio: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(args)) {
        Ok(v) => {
            println!("{v}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("steadfast-node-baseline: error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
