//! Shared test support: a real PostgreSQL (STEADFAST_TEST_DATABASE_URL, default
//! postgres://postgres@127.0.0.1:5432/test), one fresh schema per test, dropped afterwards.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

/// `in_both_modes!(f, g)`: for each `async fn f(polling: PollingMode)` of the test file, a
/// module `f` with the tests `listen` and `session_free` (declare `#[macro_use] mod common;`).
#[allow(unused_macros)]
macro_rules! in_both_modes {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn listen() {
                super::$test(steadfast_pg::PollingMode::Listen).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn session_free() {
                super::$test(steadfast_pg::PollingMode::SessionFree).await
            }
        }
    )*};
}

pub mod claim_counts;
pub mod harness;
pub mod long_poll;
pub mod queues;
pub mod versions;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use duroxide::provider_validations::ProviderFactory;
use duroxide::providers::Provider;
use rand::Rng;
use steadfast_pg::{PollingMode, PostgresProvider, ProviderOptions};

pub fn database_url() -> String {
    std::env::var("STEADFAST_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// A schema name unique to this test run: `sft_<epoch secs>_<label>_<random>`.
pub fn unique_schema(label: &str) -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let tag: String = label
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .take(24)
        .collect();
    let n: u32 = rand::thread_rng().r#gen();
    format!("sft_{secs}_{tag}_{n:08x}").to_lowercase()
}

pub async fn admin_pool() -> sqlx::PgPool {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&database_url())
        .await
        .expect("test database reachable (set STEADFAST_TEST_DATABASE_URL)")
}

/// Run one statement in its own transaction (so it also works through a
/// transaction-mode pooler, see src/run.rs). `bind` is an optional text parameter.
pub async fn admin_exec(pool: &sqlx::PgPool, sql: &str, bind: Option<&str>) {
    let mut tx = pool.begin().await.unwrap();
    let mut q = sqlx::query(sql).persistent(false);
    if let Some(b) = bind {
        q = q.bind(b.to_string());
    }
    q.execute(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
}

/// Drop a test schema and, opportunistically, test schemas left behind more than an hour
/// ago by runs that crashed before cleaning up.
pub async fn drop_schema(schema: &str) {
    let pool = admin_pool().await;
    admin_exec(
        &pool,
        &format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE"),
        None,
    )
    .await;
    let cutoff = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 3600;
    let mut tx = pool.begin().await.unwrap();
    let stale: Vec<String> =
        sqlx::query_scalar("SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 'sft\\_%'")
            .persistent(false)
            .fetch_all(&mut *tx)
            .await
            .unwrap_or_default();
    tx.commit().await.unwrap();
    for s in stale {
        let ts = s.split('_').nth(1).and_then(|t| t.parse::<u64>().ok());
        if ts.is_some_and(|t| t < cutoff) {
            admin_exec(
                &pool,
                &format!("DROP SCHEMA IF EXISTS \"{s}\" CASCADE"),
                None,
            )
            .await;
        }
    }
    pool.close().await;
}

/// The URL session-free providers use: a transaction-mode PgBouncer when
/// STEADFAST_TEST_PGBOUNCER_URL is set (CI sets it), else the database itself.
pub fn session_free_url() -> String {
    std::env::var("STEADFAST_TEST_PGBOUNCER_URL").unwrap_or_else(|_| database_url())
}

pub fn options(schema: &str, polling: PollingMode) -> ProviderOptions {
    let url = match polling {
        PollingMode::SessionFree => session_free_url(),
        PollingMode::Listen => database_url(),
    };
    let mut o = ProviderOptions::new(url).with_schema(schema);
    o.max_connections = 5;
    // Tests share 2 cores with PostgreSQL; a handshake under load can outlast the 10 s
    // default. No test here is about acquire timeouts (bad_input.rs sets its own).
    o.acquire_timeout = Duration::from_secs(60);
    o.polling = polling;
    o
}

/// [`options`] for a provider that stands in for another process: it shares no wake-ups
/// with the providers of this one (`ProviderOptions::share_wakes_in_process`).
pub fn other_process(schema: &str, polling: PollingMode) -> ProviderOptions {
    let mut o = options(schema, polling);
    o.share_wakes_in_process = false;
    o
}

/// `name` as `pg_stat_activity` shows it: PostgreSQL keeps the first 63 bytes of an
/// application name (ASCII names here, so 63 characters).
pub fn application_name(name: &str) -> String {
    name.chars().take(63).collect()
}

/// [`options`] for a listening provider whose connections show as `application` in
/// `pg_stat_activity` (see [`application_name`]).
pub fn named_options(schema: &str, application: &str) -> ProviderOptions {
    with_application_name(options(schema, PollingMode::Listen), application)
}

/// `o` with its connections shown as `application` in `pg_stat_activity`.
pub fn with_application_name(mut o: ProviderOptions, application: &str) -> ProviderOptions {
    let separator = if o.database_url.contains('?') {
        '&'
    } else {
        '?'
    };
    o.database_url = format!(
        "{}{separator}application_name={application}",
        o.database_url
    );
    o
}

/// Wait until no server connection named `application` is left (a backend reports its
/// statistics as it exits); panics after `timeout`.
pub async fn wait_connections_gone(application: &str, timeout: Duration) {
    let admin = admin_pool().await;
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let open: i64 =
            sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1")
                .persistent(false)
                .bind(application)
                .fetch_one(&admin)
                .await
                .unwrap();
        if open == 0 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{open} connections named {application} still open after {timeout:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    admin.close().await;
}

pub async fn provider_with(options: ProviderOptions) -> Arc<PostgresProvider> {
    Arc::new(
        PostgresProvider::connect_with_options(options)
            .await
            .expect("provider connects"),
    )
}

/// duroxide's validation factory. Every `create_provider` call gets a fresh schema:
/// `test_fetch_filter_boundary_versions` relies on a second provider being isolated from
/// the first (the reference SQLite factory returns a new in-memory database per call).
/// Cross-instance FIFO is assumed by several validations (e.g.
/// `test_cross_instance_lock_isolation` expects the oldest instance first), so the suite
/// runs with `fanout = 1`; fan-out itself is covered by `claim_invariants.rs`. Strict FIFO
/// makes concurrent fetchers chase the same rows, and `test_concurrent_instance_fetching`
/// expects every one of 10 concurrent fetches to find work, so the claim bounds are
/// raised (64 tries, 30 s) so that a loaded machine cannot turn that herd into an empty
/// fetch; the bounds themselves are tested in `claim_invariants.rs`.
pub struct ValidationFactory {
    pub label: String,
    pub polling: PollingMode,
    schemas: std::sync::Mutex<Vec<String>>,
}

impl ValidationFactory {
    pub async fn listen(label: &str) -> Self {
        Self::new(label, PollingMode::Listen)
    }

    pub async fn session_free(label: &str) -> Self {
        Self::new(label, PollingMode::SessionFree)
    }

    fn new(label: &str, polling: PollingMode) -> Self {
        Self {
            label: label.to_string(),
            polling,
            schemas: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn current_schema(&self) -> String {
        self.schemas
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a provider was created")
    }

    fn options_for(&self, schema: &str) -> ProviderOptions {
        let mut o = options(schema, self.polling);
        o.claim.fanout = 1;
        o.claim.max_claim_attempts = 64;
        o.claim.max_claim_duration = Duration::from_secs(30);
        // duroxide's suite re-fetches an expired lease `lock_timeout + 100 ms` after the
        // first claim began, so the claim's own latency and our redelivery backoff (20-24 ms
        // by default) share those 100 ms; on a loaded 2-core machine they overran it. The
        // backoff itself is asserted by our own tests (claim_invariants, lease_deadlines).
        o.claim.redelivery_backoff.base = Duration::from_millis(1);
        o
    }

    pub async fn cleanup(&self) {
        let schemas = std::mem::take(&mut *self.schemas.lock().unwrap());
        for s in schemas {
            drop_schema(&s).await;
        }
    }
}

#[async_trait::async_trait]
impl ProviderFactory for ValidationFactory {
    async fn create_provider(&self) -> Arc<dyn Provider> {
        let schema = unique_schema(&self.label);
        self.schemas.lock().unwrap().push(schema.clone());
        provider_with(self.options_for(&schema)).await
    }

    fn lock_timeout(&self) -> Duration {
        Duration::from_millis(1000)
    }

    fn short_poll_threshold(&self) -> Duration {
        Duration::from_millis(500)
    }

    async fn corrupt_instance_history(&self, instance: &str) {
        let pool = admin_pool().await;
        let sql = format!(
            "UPDATE \"{}\".history SET event_data = '{{\"type\":\"FromTheFuture\"}}' WHERE instance_id = $1",
            self.current_schema()
        );
        admin_exec(&pool, &sql, Some(instance)).await;
        pool.close().await;
    }

    async fn get_max_attempt_count(&self, instance: &str) -> u32 {
        let provider = provider_with(self.options_for(&self.current_schema())).await;
        provider.max_attempt_count(instance).await.unwrap()
    }
}

/// Whether a backend whose query contains `marker` waits for a lock (on `relation`, if
/// named) within 30 s.
pub async fn waits_on_lock(marker: &str, relation: Option<String>) -> bool {
    let admin = admin_pool().await;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let mut tx = admin.begin().await.unwrap();
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity
             WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0
               AND pid <> pg_backend_pid()
               AND ($2::text IS NULL
                    OR EXISTS (SELECT 1 FROM pg_locks AS l
                               WHERE l.pid = pg_stat_activity.pid AND NOT l.granted
                                 AND l.relation = $2::regclass))",
        )
        .persistent(false)
        .bind(marker)
        .bind(relation.as_deref())
        .fetch_one(&mut *tx)
        .await
        .unwrap();
        tx.commit().await.unwrap();
        if waiting > 0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// Whether another backend is running a statement whose text contains `marker`.
pub async fn statement_running(marker: &str) -> bool {
    let admin = admin_pool().await;
    let mut tx = admin.begin().await.unwrap();
    let running: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_stat_activity
                        WHERE state = 'active' AND strpos(query, $1) > 0
                          AND pid <> pg_backend_pid())",
    )
    .persistent(false)
    .bind(marker)
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    running
}
