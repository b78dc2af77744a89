//! One fault scenario on one schema: start orchestrations, sample attempt counts while
//! faults happen, then check every invariant from the database.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use duroxide::{Client, OrchestrationStatus};
use sqlx::PgPool;
use steadfast_faults::workload::{Expected, Kind};
use steadfast_pg::{PollingMode, PostgresProvider, ProviderOptions};

use super::fleet::{Fleet, WorkerSpec};
use super::{check_pool, sql};

/// Every client call is retried on error until this passes: the faults make some fail.
const CLIENT_PATIENCE: Duration = Duration::from_secs(60);
/// Bound for all instances to reach a terminal state after the faults stopped.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(120);

pub struct Scenario {
    pub url: String,
    pub schema: String,
    pub max_attempts: u32,
    provider: Arc<PostgresProvider>,
    client: Client,
    check: PgPool,
    started: Vec<(String, Kind, i64)>,
    sampler: Sampler,
    began: Instant,
}

/// Samples `max(attempt_count)` over queues and dead letters every 100 ms.
struct Sampler {
    max: Arc<AtomicI64>,
    samples: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Sampler {
    fn start(pool: PgPool, schema: &str) -> Self {
        let (max, samples, stop) = (
            Arc::new(AtomicI64::new(0)),
            Arc::new(AtomicI64::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let query = sql(include_str!("../../sql/max_attempt_count.sql"), schema);
        let task = {
            let (max, samples, stop) = (max.clone(), samples.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::SeqCst) {
                    // The server may be down or out of slots: such samples are skipped.
                    let sample = tokio::time::timeout(
                        Duration::from_secs(2),
                        sqlx::query_scalar::<_, i64>(&query).fetch_one(&pool),
                    )
                    .await;
                    if let Ok(Ok(n)) = sample {
                        max.fetch_max(n, Ordering::SeqCst);
                        samples.fetch_add(1, Ordering::SeqCst);
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        };
        Self {
            max,
            samples,
            stop,
            task,
        }
    }

    async fn finish(&mut self) -> (i64, i64) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = (&mut self.task).await;
        (
            self.max.load(Ordering::SeqCst),
            self.samples.load(Ordering::SeqCst),
        )
    }
}

/// What a scenario saw, for the test's log line.
#[derive(Debug)]
pub struct Report {
    pub instances: usize,
    pub max_attempt_count: i64,
    pub attempt_samples: i64,
    pub dead_letters: usize,
    pub seconds: f64,
}

async fn retry<T, F, Fut>(what: &str, mut op: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, String>>,
{
    let deadline = Instant::now() + CLIENT_PATIENCE;
    loop {
        match op().await {
            Ok(v) => return v,
            Err(e) if Instant::now() < deadline => {
                eprintln!("{what}: {e}; retrying");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Err(e) => panic!("{what} kept failing: {e}"),
        }
    }
}

impl Scenario {
    /// Create the schema (through a provider connect) and start sampling.
    pub async fn new(url: &str, schema: &str, max_attempts: u32) -> Self {
        let mut options = ProviderOptions::new(url).with_schema(schema);
        options.max_connections = 3;
        options.polling = PollingMode::SessionFree;
        options.claim.max_attempts = Some(max_attempts);
        let provider = Arc::new(
            PostgresProvider::connect_with_options(options)
                .await
                .expect("test provider connects"),
        );
        let client = Client::new(provider.clone());
        let check = check_pool(url).await;
        let sampler = Sampler::start(check.clone(), schema);
        Self {
            url: url.to_string(),
            schema: schema.to_string(),
            max_attempts,
            provider,
            client,
            check,
            started: Vec::new(),
            sampler,
            began: Instant::now(),
        }
    }

    /// A worker for this scenario polling in `polling` (`listen` or `session-free`), with
    /// `extra` arguments.
    pub fn worker(&self, polling: &str, extra: &[&str]) -> WorkerSpec {
        let mut args = vec![
            "--max-attempts".to_string(),
            self.max_attempts.to_string(),
            "--polling".to_string(),
            polling.to_string(),
        ];
        args.extend(extra.iter().map(|a| a.to_string()));
        WorkerSpec {
            args,
            env: Vec::new(),
        }
    }

    /// Start `count` instances of each kind in `kinds`; returns their ids.
    pub async fn start(&mut self, kinds: &[Kind], count: usize) -> Vec<String> {
        let first = self.started.len();
        for _ in 0..count {
            for &kind in kinds {
                let n = self.started.len() as i64;
                let id = format!("{}-{n}", kind.name().to_lowercase());
                let client = &self.client;
                retry(&format!("start {id}"), || async {
                    match client
                        .start_orchestration(&id, kind.name(), n.to_string())
                        .await
                    {
                        Ok(()) => Ok(()),
                        // A start whose reply was lost may have committed: starting the
                        // same instance again is then refused, which is fine.
                        Err(e) if e.to_string().to_lowercase().contains("already") => Ok(()),
                        Err(e) => Err(e.to_string()),
                    }
                })
                .await;
                self.started.push((id, kind, n));
            }
        }
        self.started[first..]
            .iter()
            .map(|(id, _, _)| id.clone())
            .collect()
    }

    /// How many started instances are terminal now.
    pub async fn terminal_count(&self) -> usize {
        let mut n = 0;
        for (id, _, _) in &self.started {
            if let Ok(OrchestrationStatus::Completed { .. } | OrchestrationStatus::Failed { .. }) =
                self.client.get_orchestration_status(id).await
            {
                n += 1;
            }
        }
        n
    }

    /// Wait for every instance to end, check every invariant, stop the fleet, drop the
    /// schema when `drop_schema` (on the shared server), and report.
    pub async fn verify(mut self, fleet: &mut Fleet, drop_schema: bool) -> Report {
        let settle_deadline = Instant::now() + SETTLE_TIMEOUT;
        let mut outcomes = HashMap::new();
        for (id, kind, n) in &self.started {
            let status = loop {
                let status = self.client.get_orchestration_status(id).await;
                match status {
                    Ok(
                        s @ (OrchestrationStatus::Completed { .. }
                        | OrchestrationStatus::Failed { .. }),
                    ) => break s,
                    other => {
                        assert!(
                            Instant::now() < settle_deadline,
                            "{id} ({kind:?}) never reached a terminal state: last status {other:?}"
                        );
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                }
            };
            let expected = kind.expected(*n);
            match (&status, &expected) {
                (OrchestrationStatus::Completed { output, .. }, Expected::Completed(want)) => {
                    assert_eq!(output, want, "{id}: wrong output")
                }
                (OrchestrationStatus::Failed { details, .. }, Expected::Failed(category)) => {
                    assert_eq!(
                        details.category(),
                        *category,
                        "{id}: failed for the wrong reason: {}",
                        details.display_message()
                    )
                }
                _ => panic!("{id}: expected {expected:?}, got {status:?}"),
            }
            outcomes.insert(id.clone(), *kind);
        }

        // Nothing left queued: no message is still being retried after every instance ended.
        let depths = sql(include_str!("../../sql/queue_depths.sql"), &self.schema);
        super::wait_until("empty queues", Duration::from_secs(60), || async {
            let (o, w): (i64, i64) = sqlx::query_as(&depths)
                .fetch_one(&self.check)
                .await
                .unwrap_or((-1, -1));
            o == 0 && w == 0
        })
        .await;

        let (max_attempt_count, attempt_samples) = self.sampler.finish().await;
        self.check_history(&outcomes).await;
        let dead_letters = self.check_dead_letters(&outcomes).await;
        let final_max: i64 = sqlx::query_scalar(&sql(
            include_str!("../../sql/max_attempt_count.sql"),
            &self.schema,
        ))
        .fetch_one(&self.check)
        .await
        .unwrap();
        let max_attempt_count = max_attempt_count.max(final_max);
        let ceiling = i64::from(self.max_attempts) + 1;
        assert!(attempt_samples > 0, "attempt counts were never sampled");
        assert!(
            max_attempt_count <= ceiling,
            "max(attempt_count) {max_attempt_count} > max_attempts + 1 = {ceiling}"
        );

        let report = Report {
            instances: self.started.len(),
            max_attempt_count,
            attempt_samples,
            dead_letters,
            seconds: self.began.elapsed().as_secs_f64(),
        };
        fleet.stop_all().await;
        self.provider.close().await;
        if drop_schema {
            sqlx::query(&sql(
                include_str!("../../sql/drop_schema.sql"),
                &self.schema,
            ))
            .execute(&self.check)
            .await
            .unwrap();
        }
        self.check.close().await;
        report
    }

    /// One execution and one terminal event per instance; at most one completion per
    /// scheduled activity or timer.
    async fn check_history(&self, outcomes: &HashMap<String, Kind>) {
        let executions: Vec<(String, i64)> = sqlx::query_as(&sql(
            include_str!("../../sql/execution_counts.sql"),
            &self.schema,
        ))
        .fetch_all(&self.check)
        .await
        .unwrap();
        assert_eq!(executions.len(), outcomes.len(), "instances in executions");
        for (id, count) in &executions {
            assert!(outcomes.contains_key(id), "unknown instance {id}");
            assert_eq!(*count, 1, "{id} has {count} executions");
        }
        let terminal: Vec<(String, i64, i64)> = sqlx::query_as(&sql(
            include_str!("../../sql/terminal_events.sql"),
            &self.schema,
        ))
        .fetch_all(&self.check)
        .await
        .unwrap();
        let with_terminal: HashSet<&String> = terminal.iter().map(|(id, _, _)| id).collect();
        assert_eq!(
            with_terminal.len(),
            outcomes.len(),
            "instances with a terminal event"
        );
        for (id, execution, count) in &terminal {
            assert_eq!(
                *count, 1,
                "{id} execution {execution} has {count} terminal events"
            );
        }
        let duplicates: Vec<(String, i64, Option<String>, i64)> = sqlx::query_as(&sql(
            include_str!("../../sql/duplicate_completions.sql"),
            &self.schema,
        ))
        .fetch_all(&self.check)
        .await
        .unwrap();
        assert!(
            duplicates.is_empty(),
            "completed more than once (instance, execution, scheduling event, count): {duplicates:?}"
        );
    }

    /// Every poisoned instance has its message in the dead-letter store, and nothing else
    /// is there. Returns the number of dead letters.
    async fn check_dead_letters(&self, outcomes: &HashMap<String, Kind>) -> usize {
        let rows: Vec<(String, String, i64, String)> = sqlx::query_as(&sql(
            include_str!("../../sql/dead_letters.sql"),
            &self.schema,
        ))
        .fetch_all(&self.check)
        .await
        .unwrap();
        let dead: HashSet<&String> = rows.iter().map(|(id, _, _, _)| id).collect();
        for (id, kind) in outcomes {
            assert_eq!(
                dead.contains(id),
                kind.dead_letters(),
                "{id} ({kind:?}): dead letters {rows:?}"
            );
        }
        rows.len()
    }
}
