//! Regression test for the production livelock that steadfast-pg exists to prevent.
//!
//! Upstream, one orchestration message was redelivered every ~6 s for five days
//! (attempt_count 78,987 against max_attempts 10): 32 dispatchers raced for the same
//! oldest row, the lease was already expired by the time the runtime got the item, every
//! ack with that dead lease failed, and the runtime's poison marking (itself an ack keyed
//! on the dead lock token) was lost every time.
//!
//! This test rebuilds that situation on one schema: 4 runtimes x 8 orchestration
//! dispatchers (32, each runtime with its own provider and pool, like separate processes),
//! and a test-only provider wrapper that delays every fetch of the hot instance past its
//! lease (`lock_timeout + 300 ms`), so every attempt at it acks with a dead lease. It
//! checks that the hot instance still ends `Failed` as poison within the attempt budget,
//! that its start message is dead-lettered, that the attempt count never passes
//! `max_attempts + 1`, and that 20 healthy instances complete meanwhile.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use duroxide::providers::{DispatcherCapabilityFilter, OrchestrationItem, Provider, ProviderError};
use duroxide::runtime::Runtime;
use duroxide::runtime::registry::ActivityRegistry;
use duroxide::{
    ActivityContext, Client, OrchestrationContext, OrchestrationRegistry, OrchestrationStatus,
    RuntimeOptions,
};
use steadfast_pg::{
    DeadLetter, DeadLetterFilter, Diagnostic, DiagnosticKind, Layered, PollingMode,
    PostgresProvider, ProviderLayer, RedeliveryBackoff,
};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

const RUNTIMES: usize = 4;
const ORCHESTRATION_CONCURRENCY: usize = 8;
const WORKER_CONCURRENCY: usize = 2;
const MAX_ATTEMPTS: u32 = 10;
const LOCK_TIMEOUT: Duration = Duration::from_secs(1);
/// How much longer than its lease the hot instance's fetch takes (the incident: ~6.4 s
/// fetch latency against a 5 s lease).
const FETCH_OVERRUN: Duration = Duration::from_millis(300);
const HEALTHY_INSTANCES: usize = 20;
const HOT_DEADLINE: Duration = Duration::from_secs(90);
const SAMPLE_EVERY: Duration = Duration::from_millis(50);

const ORCHESTRATION: &str = "Checkout";
const ACTIVITY: &str = "ChargeCard";

/// Test-only provider wrapper: delegates everything to steadfast, but when a fetched
/// orchestration item belongs to the hot instance it sleeps past the item's lease before
/// handing it to the runtime (a slow fetch / stalled event loop). Every attempt at the hot
/// instance therefore reaches the runtime with a lease that is already dead.
struct SlowHotFetch {
    inner: Arc<PostgresProvider>,
    hot_instance: String,
    delayed_fetches: Arc<AtomicU32>,
}

#[async_trait::async_trait]
impl ProviderLayer for SlowHotFetch {
    fn inner(&self) -> &dyn Provider {
        &*self.inner
    }

    async fn fetch_orchestration_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        filter: Option<&DispatcherCapabilityFilter>,
    ) -> Result<Option<(OrchestrationItem, String, u32)>, ProviderError> {
        let fetched = self
            .inner
            .fetch_orchestration_item(lock_timeout, poll_timeout, filter)
            .await?;
        if let Some((item, _, _)) = &fetched
            && item.instance == self.hot_instance
        {
            self.delayed_fetches.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(lock_timeout + FETCH_OVERRUN).await;
        }
        Ok(fetched)
    }
}

fn activities() -> ActivityRegistry {
    ActivityRegistry::builder()
        .register(
            ACTIVITY,
            |_ctx: ActivityContext, order: String| async move { Ok(format!("charged {order}")) },
        )
        .build()
}

async fn checkout(ctx: OrchestrationContext, order: String) -> Result<String, String> {
    let receipt = ctx.schedule_activity(ACTIVITY, order).await?;
    Ok(receipt)
}

fn orchestrations() -> OrchestrationRegistry {
    OrchestrationRegistry::builder()
        .register(ORCHESTRATION, checkout)
        .build()
}

type Collected = Arc<Mutex<Vec<(usize, Diagnostic)>>>;

/// A healthy instance's id, final status (or client error) and time since the runtimes started.
type HealthyOutcome = (String, Result<OrchestrationStatus, String>, Duration);

/// Collect every diagnostic of one provider (tagged with the runtime index).
fn collect_diagnostics(
    runtime: usize,
    provider: &PostgresProvider,
    sink: Collected,
    lagged: Arc<AtomicU64>,
) -> JoinHandle<()> {
    let mut rx = provider.subscribe();
    tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(d) => sink.lock().unwrap().push((runtime, d)),
                Err(RecvError::Lagged(n)) => {
                    lagged.fetch_add(n, Ordering::Relaxed);
                }
                Err(RecvError::Closed) => break,
            }
        }
    })
}

fn is_hot_disposition(d: &Diagnostic, hot: &str) -> bool {
    d.instance_id.as_deref() == Some(hot)
        && matches!(
            d.kind,
            DiagnosticKind::PoisonCommittedWithoutLease | DiagnosticKind::AttemptCeilingEnforced
        )
}

fn describe(status: &OrchestrationStatus) -> String {
    match status {
        OrchestrationStatus::NotFound => "NotFound".into(),
        OrchestrationStatus::Running { custom_status, .. } => {
            format!("Running ({custom_status:?})")
        }
        OrchestrationStatus::Completed { output, .. } => format!("Completed ({output})"),
        OrchestrationStatus::Failed { details, .. } => {
            format!(
                "Failed [{}] {}",
                details.category(),
                details.display_message()
            )
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn livelock_scenario_ends_with_poison_and_healthy_progress() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("off")),
        )
        .with_test_writer()
        .try_init();

    let schema = common::unique_schema("livelock");
    let run = schema.rsplit('_').next().unwrap().to_string();
    let hot = format!("hot-{run}");
    let healthy: Vec<String> = (0..HEALTHY_INSTANCES)
        .map(|i| format!("ok-{run}-{i:02}"))
        .collect();

    // One provider per runtime: separate pools, like separate processes.
    let mut providers = Vec::with_capacity(RUNTIMES);
    for _ in 0..RUNTIMES {
        let mut o = common::other_process(&schema, PollingMode::Listen);
        o.max_connections = 6;
        o.claim.max_attempts = Some(MAX_ATTEMPTS);
        o.claim.redelivery_backoff = RedeliveryBackoff {
            base: Duration::from_millis(10),
            cap: Duration::from_millis(300),
            jitter: 0.2,
        };
        providers.push(common::provider_with(o).await);
    }

    let diagnostics: Collected = Arc::new(Mutex::new(Vec::new()));
    let lagged = Arc::new(AtomicU64::new(0));
    let collectors: Vec<JoinHandle<()>> = providers
        .iter()
        .enumerate()
        .map(|(i, p)| collect_diagnostics(i, p, Arc::clone(&diagnostics), Arc::clone(&lagged)))
        .collect();

    // Enqueue the hot instance first so it is the oldest row every dispatcher sees, then
    // the healthy load.
    let client = Client::new(providers[0].clone() as Arc<dyn Provider>);
    client
        .start_orchestration(&hot, ORCHESTRATION, "order-hot")
        .await
        .expect("start hot instance");
    for id in &healthy {
        client
            .start_orchestration(id, ORCHESTRATION, format!("order-{id}"))
            .await
            .expect("start healthy instance");
    }

    let started = Instant::now();
    let started_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let delayed_fetches = Arc::new(AtomicU32::new(0));
    let mut runtimes = Vec::with_capacity(RUNTIMES);
    for p in &providers {
        let store: Arc<dyn Provider> = Arc::new(Layered(SlowHotFetch {
            inner: Arc::clone(p),
            hot_instance: hot.clone(),
            delayed_fetches: Arc::clone(&delayed_fetches),
        }));
        let options = RuntimeOptions {
            max_attempts: MAX_ATTEMPTS,
            orchestration_concurrency: ORCHESTRATION_CONCURRENCY,
            worker_concurrency: WORKER_CONCURRENCY,
            orchestrator_lock_timeout: LOCK_TIMEOUT,
            dispatcher_min_poll_interval: Duration::from_millis(20),
            ..RuntimeOptions::default()
        };
        runtimes.push(
            Runtime::start_with_options(store, activities(), orchestrations(), options).await,
        );
    }

    // Sample the hot instance's attempt count while everything runs.
    let max_seen = Arc::new(AtomicU32::new(0));
    let sampling = Arc::new(AtomicBool::new(true));
    let sample_errors = Arc::new(AtomicU32::new(0));
    let sampler = {
        let provider = Arc::clone(&providers[0]);
        let hot = hot.clone();
        let max_seen = Arc::clone(&max_seen);
        let sampling = Arc::clone(&sampling);
        let sample_errors = Arc::clone(&sample_errors);
        tokio::spawn(async move {
            let mut samples = 0u32;
            while sampling.load(Ordering::Relaxed) {
                match provider.max_attempt_count(&hot).await {
                    Ok(n) => {
                        max_seen.fetch_max(n, Ordering::Relaxed);
                    }
                    Err(_) => {
                        sample_errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
                samples += 1;
                tokio::time::sleep(SAMPLE_EVERY).await;
            }
            samples
        })
    };

    // Healthy instances, each timed from the runtimes' start.
    let healthy_waits: Vec<JoinHandle<HealthyOutcome>> = healthy
        .iter()
        .map(|id| {
            let client = Client::new(providers[0].clone() as Arc<dyn Provider>);
            let id = id.clone();
            tokio::spawn(async move {
                let status = client
                    .wait_for_orchestration(&id, HOT_DEADLINE)
                    .await
                    .map_err(|e| e.to_string());
                (id, status, started.elapsed())
            })
        })
        .collect();

    let hot_status = tokio::time::timeout(
        HOT_DEADLINE,
        client.wait_for_orchestration(&hot, HOT_DEADLINE + Duration::from_secs(5)),
    )
    .await;
    let hot_elapsed = started.elapsed();
    let hot_status: Result<OrchestrationStatus, String> = match hot_status {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(format!("client error: {e}")),
        Err(_) => Err(format!("not terminal within {} s", HOT_DEADLINE.as_secs())),
    };

    // The disposition's diagnostic is emitted right after its commit: give it a moment.
    let wait_until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < wait_until
        && !diagnostics
            .lock()
            .unwrap()
            .iter()
            .any(|(_, d)| is_hot_disposition(d, &hot))
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let mut healthy_results = Vec::with_capacity(HEALTHY_INSTANCES);
    for h in healthy_waits {
        healthy_results.push(h.await.expect("healthy wait task"));
    }

    // Keep sampling a little past the terminal state: a ceiling or a stray redelivery
    // would show up here.
    tokio::time::sleep(Duration::from_millis(500)).await;
    sampling.store(false, Ordering::Relaxed);
    let samples = sampler.await.expect("sampler task");
    let final_count = providers[0].max_attempt_count(&hot).await.ok();

    let hot_dead_letters: Vec<DeadLetter> = providers[0]
        .list_dead_letters(&DeadLetterFilter {
            instance_id: Some(hot.clone()),
            limit: Some(1000),
            ..Default::default()
        })
        .await
        .expect("list hot dead letters");
    let all_dead_letters: Vec<DeadLetter> = providers[0]
        .list_dead_letters(&DeadLetterFilter {
            limit: Some(1000),
            ..Default::default()
        })
        .await
        .expect("list all dead letters");

    // Shut everything down before asserting so a failure does not leak runtimes or the schema.
    for rt in runtimes {
        rt.shutdown(Some(2_000)).await;
    }
    for c in &collectors {
        c.abort();
    }
    for p in &providers {
        p.close().await;
    }
    drop(providers);
    common::drop_schema(&schema).await;

    let diagnostics = std::mem::take(&mut *diagnostics.lock().unwrap());
    let max_seen = max_seen.load(Ordering::Relaxed);
    let mut by_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut hot_by_kind: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (_, d) in &diagnostics {
        *by_kind.entry(d.kind.event_name()).or_default() += 1;
        if d.instance_id.as_deref() == Some(hot.as_str()) {
            *hot_by_kind.entry(d.kind.event_name()).or_default() += 1;
        }
    }
    let completed = healthy_results
        .iter()
        .filter(|(_, s, _)| matches!(s, Ok(OrchestrationStatus::Completed { .. })))
        .count();
    let last_healthy = healthy_results
        .iter()
        .map(|(_, _, t)| *t)
        .max()
        .unwrap_or_default();

    let mut report = String::new();
    writeln!(
        report,
        "hot instance {hot}: {}",
        match &hot_status {
            Ok(s) => describe(s),
            Err(e) => e.clone(),
        }
    )
    .unwrap();
    writeln!(
        report,
        "attempt count: max sampled {max_seen} ({samples} samples, {} errors), after terminal {final_count:?}; hot fetches delayed {}",
        sample_errors.load(Ordering::Relaxed),
        delayed_fetches.load(Ordering::Relaxed),
    )
    .unwrap();
    writeln!(
        report,
        "dead letters ({} total, {} for hot):",
        all_dead_letters.len(),
        hot_dead_letters.len()
    )
    .unwrap();
    for l in &all_dead_letters {
        writeln!(
            report,
            "  #{} {} exec={:?} attempt_count={} max={:?} reason={} work_item={}",
            l.id,
            l.instance_id,
            l.execution_id,
            l.attempt_count,
            l.max_attempts,
            l.reason,
            l.work_item
        )
        .unwrap();
    }
    writeln!(
        report,
        "healthy ({completed}/{HEALTHY_INSTANCES} completed):"
    )
    .unwrap();
    for (id, s, t) in &healthy_results {
        if !matches!(s, Ok(OrchestrationStatus::Completed { .. })) {
            let s = match s {
                Ok(s) => describe(s),
                Err(e) => e.clone(),
            };
            writeln!(report, "  {id} after {} ms: {s}", t.as_millis()).unwrap();
        }
    }
    writeln!(
        report,
        "diagnostics ({} collected, {} lagged): {by_kind:?}",
        diagnostics.len(),
        lagged.load(Ordering::Relaxed)
    )
    .unwrap();
    for (rt, d) in &diagnostics {
        if d.kind != DiagnosticKind::ClaimExhausted {
            writeln!(report, "  [rt{rt} +{} ms] {d}", d.at_ms as i64 - started_ms).unwrap();
        }
    }

    println!(
        "SUMMARY livelock_regression: hot terminal after {:.2} s ({}); max attempt_count seen {max_seen} \
         (dead letters max {}); hot fetches delayed {}; diagnostics by kind {by_kind:?} (hot instance {hot_by_kind:?}); \
         healthy completed {completed}/{HEALTHY_INSTANCES}, last at {:.2} s",
        hot_elapsed.as_secs_f64(),
        match &hot_status {
            Ok(s) => describe(s),
            Err(e) => e.clone(),
        },
        all_dead_letters
            .iter()
            .map(|l| l.attempt_count)
            .max()
            .unwrap_or(0),
        delayed_fetches.load(Ordering::Relaxed),
        last_healthy.as_secs_f64(),
    );

    // The hot instance ends Failed, as poison.
    match &hot_status {
        Ok(OrchestrationStatus::Failed { details, .. }) => {
            let text = details.display_message();
            assert!(
                text.contains("poison") && details.category() == "poison",
                "hot instance failed, but not as poison: {text}\n{report}"
            );
        }
        _ => panic!("hot instance did not end Failed as poison\n{report}"),
    }
    // Bounded attempts: never more than max_attempts + 1 hand-outs.
    assert!(
        max_seen <= MAX_ATTEMPTS + 1,
        "attempt count reached {max_seen} (> {})\n{report}",
        MAX_ATTEMPTS + 1
    );
    assert!(
        all_dead_letters
            .iter()
            .all(|l| l.attempt_count <= MAX_ATTEMPTS + 1),
        "a dead letter records more than {} attempts\n{report}",
        MAX_ATTEMPTS + 1
    );
    // Nothing lost: the start message is in the dead-letter table.
    assert!(
        !hot_dead_letters.is_empty(),
        "no dead letters for the hot instance\n{report}"
    );
    assert!(
        hot_dead_letters
            .iter()
            .any(|l| l.work_item.contains("StartOrchestration")),
        "the hot instance's start message was not dead-lettered\n{report}"
    );
    // Healthy progress throughout.
    assert_eq!(
        completed, HEALTHY_INSTANCES,
        "not every healthy instance completed\n{report}"
    );
    // The disposition was committed by steadfast despite the dead lease, or by the ceiling.
    assert!(
        diagnostics.iter().any(|(_, d)| is_hot_disposition(d, &hot)),
        "no PoisonCommittedWithoutLease / AttemptCeilingEnforced diagnostic for the hot instance\n{report}"
    );
    println!("{report}");
}
