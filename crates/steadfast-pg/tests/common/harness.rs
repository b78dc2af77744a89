//! A provider on a fresh schema, with the work items and turns the provider tests build.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use duroxide::providers::{ExecutionMetadata, Provider, SessionFetchConfig, TagFilter, WorkItem};
use duroxide::{ErrorDetails, Event, EventKind, PoisonMessageType};
use steadfast_pg::{Diagnostic, PollingMode, PostgresProvider, ProviderOptions};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::claim_counts::idle_fetches;

pub const LONG: Duration = Duration::from_secs(30);

pub fn start(instance: &str) -> WorkItem {
    WorkItem::StartOrchestration {
        instance: instance.into(),
        orchestration: "Orch".into(),
        input: "{}".into(),
        version: Some("1.0.0".into()),
        parent_instance: None,
        parent_id: None,
        parent_execution_id: None,
        execution_id: 1,
    }
}

/// An activity of execution 1 of `instance`, with no session or tag.
pub fn activity_item(instance: &str, id: u64) -> WorkItem {
    WorkItem::ActivityExecute {
        instance: instance.into(),
        execution_id: 1,
        id,
        name: "A".into(),
        input: "{}".into(),
        session_id: None,
        tag: None,
    }
}

/// An external event `name` for `instance`.
pub fn raised(instance: &str, name: &str) -> WorkItem {
    WorkItem::ExternalRaised {
        instance: instance.into(),
        name: name.into(),
        data: "1".into(),
    }
}

pub fn started_event(instance: &str) -> Event {
    started_event_of(instance, 1)
}

/// The first event of execution `execution` of `instance`.
pub fn started_event_of(instance: &str, execution: u64) -> Event {
    Event::with_event_id(
        1,
        instance,
        execution,
        None,
        EventKind::OrchestrationStarted {
            name: "Orch".into(),
            version: "1.0.0".into(),
            input: "{}".into(),
            parent_instance: None,
            parent_id: None,
            parent_execution_id: None,
            carry_forward_events: None,
            initial_custom_status: None,
        },
    )
}

pub fn running_metadata() -> ExecutionMetadata {
    ExecutionMetadata {
        orchestration_name: Some("Orch".into()),
        orchestration_version: Some("1.0.0".into()),
        ..Default::default()
    }
}

/// A poison disposition exactly as the duroxide runtime builds it.
pub fn poison_turn(
    instance: &str,
    event_id: u64,
    attempt_count: u32,
) -> (Vec<Event>, ExecutionMetadata) {
    let details = ErrorDetails::Poison {
        attempt_count,
        max_attempts: 10,
        message_type: PoisonMessageType::Orchestration {
            instance: instance.into(),
            execution_id: 1,
        },
        message: serde_json::to_string(&vec![start(instance)]).unwrap(),
    };
    let output = details.display_message();
    (
        vec![Event::with_event_id(
            event_id,
            instance,
            1,
            None,
            EventKind::OrchestrationFailed { details },
        )],
        ExecutionMetadata {
            status: Some("Failed".into()),
            output: Some(output),
            ..running_metadata()
        },
    )
}

/// An ordinary turn that completes execution 1 with `OrchestrationCompleted` at `event_id`.
pub fn completed_turn(instance: &str, event_id: u64) -> (Vec<Event>, ExecutionMetadata) {
    (
        vec![Event::with_event_id(
            event_id,
            instance,
            1,
            None,
            EventKind::OrchestrationCompleted {
                output: "\"ok\"".into(),
            },
        )],
        ExecutionMetadata {
            status: Some("Completed".into()),
            output: Some("\"ok\"".into()),
            ..running_metadata()
        },
    )
}

/// Ack a turn of a running instance that writes nothing (its messages consumed).
pub async fn ack_empty_turn(provider: &PostgresProvider, token: &str) {
    provider
        .ack_orchestration_item(token, 1, vec![], vec![], vec![], running_metadata(), vec![])
        .await
        .unwrap();
}

pub struct Harness {
    pub schema: String,
    pub provider: Arc<PostgresProvider>,
}

impl Harness {
    pub async fn new(label: &str, tune: impl FnOnce(&mut ProviderOptions)) -> Self {
        Self::with_polling(label, PollingMode::Listen, tune).await
    }

    pub async fn with_polling(
        label: &str,
        polling: PollingMode,
        tune: impl FnOnce(&mut ProviderOptions),
    ) -> Self {
        let schema = super::unique_schema(label);
        let mut options = super::options(&schema, polling);
        tune(&mut options);
        let provider = super::provider_with(options).await;
        Self { schema, provider }
    }

    /// Create a started instance (history + metadata) with no pending messages.
    pub async fn create_instance(&self, instance: &str) {
        let p = &self.provider;
        p.enqueue_for_orchestrator(start(instance), None)
            .await
            .unwrap();
        let (item, token, _) = self.fetch_only(instance).await;
        assert_eq!(item.instance, instance);
        self.ack_started(instance, &token).await;
    }

    /// Ack a claimed start with the instance's `OrchestrationStarted` and metadata.
    pub async fn ack_started(&self, instance: &str, token: &str) {
        self.ack_running(token, 1, vec![started_event(instance)])
            .await;
    }

    /// Ack a turn of execution `execution` that appends `events`, produces nothing and
    /// leaves the instance running.
    pub async fn ack_running(&self, token: &str, execution: u64, events: Vec<Event>) {
        self.provider
            .ack_orchestration_item(
                token,
                execution,
                events,
                vec![],
                vec![],
                running_metadata(),
                vec![],
            )
            .await
            .unwrap();
    }

    /// A worker fetch with `session`, `filter` and poll timeout `poll`, started and left
    /// waiting: its claim found nothing (or it skipped it) and it has had time to post its
    /// hand-off offer. Reads the claim counters: hold `claim_counts::SERIAL`.
    pub async fn waiting_worker_fetch(
        &self,
        session: Option<SessionFetchConfig>,
        filter: TagFilter,
        poll: Duration,
    ) -> JoinHandle<Option<(WorkItem, String, u32)>> {
        let idle_before = idle_fetches("worker");
        let provider = self.provider.clone();
        let fetch = tokio::spawn(async move {
            provider
                .fetch_work_item(LONG, poll, session.as_ref(), &filter)
                .await
                .unwrap()
        });
        let until = Instant::now() + Duration::from_secs(5);
        while idle_fetches("worker") == idle_before {
            assert!(Instant::now() < until, "the fetch never went idle");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // It waits (and posts its offer) right after its claim is counted.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(!fetch.is_finished(), "the fetch waits");
        fetch
    }

    pub async fn fetch_only(
        &self,
        instance: &str,
    ) -> (duroxide::providers::OrchestrationItem, String, u32) {
        let got = self
            .provider
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .expect("an item");
        assert_eq!(got.0.instance, instance);
        got
    }

    /// A started instance with 20 000 history events of ~200 bytes (4 MB) and one
    /// pending event, so that claiming it takes a while.
    pub async fn slow_claim_instance(&self, instance: &str) {
        self.create_instance(instance).await;
        let events: Vec<Event> = (2..=20_000u64)
            .map(|id| {
                Event::with_event_id(
                    id,
                    instance,
                    1,
                    None,
                    EventKind::CustomStatusUpdated {
                        status: Some("x".repeat(200)),
                    },
                )
            })
            .collect();
        let p = &self.provider;
        p.append_with_execution(instance, 1, events).await.unwrap();
        p.enqueue_for_orchestrator(
            WorkItem::ExternalRaised {
                instance: instance.into(),
                name: "go".into(),
                data: "1".into(),
            },
            None,
        )
        .await
        .unwrap();
    }

    /// Run one statement on an admin connection (`S.` is this schema), as another client
    /// of the database would.
    pub async fn exec(&self, sql: &str, bind: Option<&str>) {
        let admin = super::admin_pool().await;
        super::admin_exec(&admin, &self.sql(sql), bind).await;
        admin.close().await;
    }

    /// VACUUM one of this schema's tables (outside a transaction, as VACUUM must run).
    pub async fn vacuum(&self, table: &str) {
        let admin = super::admin_pool().await;
        sqlx::query(&self.sql(&format!("VACUUM S.{table}")))
            .persistent(false)
            .execute(&admin)
            .await
            .unwrap();
        admin.close().await;
    }

    /// Run one statement on an admin connection (`S.` is this schema) in a transaction
    /// that is left open: whatever it locks stays locked until the transaction ends.
    pub async fn hold(&self, sql: &str) -> sqlx::Transaction<'static, sqlx::Postgres> {
        let admin = super::admin_pool().await;
        let mut tx = admin.begin().await.unwrap();
        sqlx::query(&self.sql(sql))
            .persistent(false)
            .execute(&mut *tx)
            .await
            .unwrap();
        tx
    }

    /// The schema's wake-up channel (queries/notify_channel.sql); ended executions are
    /// announced on its name + `_end`.
    pub async fn wake_channel(&self) -> String {
        sqlx::query_scalar(include_str!("../../queries/notify_channel.sql"))
            .bind(&self.schema)
            .fetch_one(self.provider.pool())
            .await
            .unwrap()
    }

    pub fn sql(&self, sql: &str) -> String {
        sql.replace("S.", &format!("\"{}\".", self.schema))
    }

    /// One number read on the provider's pool, unprepared and in a transaction, so that it
    /// also works through a transaction-mode PgBouncer (session-free providers).
    pub async fn sql_f64(&self, sql: &str, bind: &str) -> f64 {
        let mut tx = self.provider.pool().begin().await.unwrap();
        let n = sqlx::query_scalar::<_, f64>(&self.sql(sql))
            .persistent(false)
            .bind(bind)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        n
    }

    /// Queue rows read so far: entries of the orchestrator queue's indexes plus rows read
    /// by sequential scans of it, from the server's counters (flushed when a backend
    /// exits: close every provider whose claims should count first).
    pub async fn queue_rows_read(&self) -> i64 {
        self.rows_read("orchestrator_queue").await
    }

    /// Index entries and sequentially scanned rows read so far from `table`, as
    /// [`Self::queue_rows_read`] counts them.
    pub async fn rows_read(&self, table: &str) -> i64 {
        self.table_counter(
            "SELECT (SELECT COALESCE(sum(idx_tup_read), 0) FROM pg_stat_user_indexes
                     WHERE schemaname = $1 AND relname = $2)::int8
                  + (SELECT COALESCE(sum(seq_tup_read), 0) FROM pg_stat_user_tables
                     WHERE schemaname = $1 AND relname = $2)::int8",
            table,
        )
        .await
    }

    /// Scans of `history` so far (each status read is one), from the server's counters
    /// (flushed when a backend exits: close every provider whose reads should count
    /// first, and connect it directly, not through a pooler that keeps its backends).
    pub async fn history_reads(&self) -> i64 {
        self.table_counter(
            "SELECT (COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0))::int8 FROM pg_stat_user_tables
             WHERE schemaname = $1 AND relname = $2",
            "history",
        )
        .await
    }

    /// One of the server's counters of this schema's `table` (`sql` takes the schema and
    /// the table), read 300 ms after the caller closed the providers that should count.
    async fn table_counter(&self, sql: &str, table: &str) -> i64 {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let admin = super::admin_pool().await;
        let n: i64 = sqlx::query_scalar(sql)
            .persistent(false)
            .bind(&self.schema)
            .bind(table)
            .fetch_one(&admin)
            .await
            .unwrap();
        admin.close().await;
        n
    }

    /// Close this harness's provider, then make five fetches on a fresh provider with the
    /// same options (`tune` applied): each must claim a `ready-*` instance (left claimed),
    /// and all five together must read fewer than 500 queue rows, by the server's counters.
    pub async fn assert_five_cheap_claims_of_ready_work(
        &self,
        tune: impl FnOnce(&mut ProviderOptions),
    ) {
        self.provider.close().await;
        let before = self.queue_rows_read().await;
        let mut options = super::options(&self.schema, PollingMode::Listen);
        tune(&mut options);
        let claimer = super::provider_with(options).await;
        for _ in 0..5 {
            let (item, _, _) = claimer
                .fetch_orchestration_item(LONG, Duration::ZERO, None)
                .await
                .unwrap()
                .expect("ready work");
            assert!(item.instance.starts_with("ready-"), "{}", item.instance);
        }
        claimer.close().await;
        let read = self.queue_rows_read().await - before;
        assert!(read < 500, "five claims read {read} queue rows");
    }

    pub async fn drop(self) {
        self.provider.close().await;
        super::drop_schema(&self.schema).await;
    }
}

pub fn drain(rx: &mut broadcast::Receiver<Diagnostic>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    while let Ok(d) = rx.try_recv() {
        out.push(d);
    }
    out
}
