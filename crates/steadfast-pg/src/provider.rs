//! The provider value: pool, rendered queries, options, diagnostics and the long-poll
//! wake-up signal. Trait methods live in the modules named after what they do.

use std::str::FromStr;
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::{PgArguments, PgConnectOptions, PgPoolOptions};
use sqlx::query::{Query, QueryScalar};
use sqlx::{Postgres, Transaction};
use std::sync::Arc;

use tokio::sync::broadcast;
use tokio_util::task::TaskTracker;

use crate::admin::AdminQueries;
use crate::database_url::Scrubber;
use crate::diagnostics::{Diagnostic, DiagnosticSink, QueueKind};
use crate::error::{SetupError, db_error};
use crate::fetch_gate::FetchGate;
use crate::give_back::GiveBack;
use crate::handoff::Handoffs;
use crate::lease_book::LeaseBook;
use crate::local_wakes::LocalWakes;
use crate::options::{PollingMode, ProviderOptions};
use crate::orphans::OrphanSweep;
use crate::password::PasswordFollower;
use crate::queries::Queries;
use crate::schema::SchemaName;
use crate::wake::{Enqueued, Wakes};

/// How often `close` looks again for connections sqlx's close missed.
const CLOSE_RECHECK: Duration = Duration::from_millis(10);

/// Connections idle at least this long are pinged before use (see `connect_with_options`).
const PING_IDLE_AFTER: Duration = Duration::from_secs(10);

/// A duroxide [`Provider`](duroxide::providers::Provider) and
/// [`ProviderAdmin`](duroxide::providers::ProviderAdmin) on PostgreSQL whose claims never
/// block, whose leases start at the claim by the database clock, and whose poison
/// dispositions do not depend on a live lease. See the crate docs for the invariants.
pub struct PostgresProvider {
    pub(crate) pool: PgPool,
    pub(crate) q: Queries,
    pub(crate) admin_q: AdminQueries,
    pub(crate) schema: SchemaName,
    pub(crate) options: ProviderOptions,
    pub(crate) diagnostics: DiagnosticSink,
    /// Give back orchestrator claims (`give_back`) and worker claims (`worker_give_back`)
    /// that nobody received.
    pub(crate) give_back: GiveBack,
    pub(crate) worker_give_back: GiveBack,
    /// Detached claim statements and give-backs: `close()` waits for them.
    pub(crate) in_flight: TaskTracker,
    pub(crate) orphan_sweep: OrphanSweep,
    /// When this process's orchestrator leases have certainly ended (acks ride out
    /// transient errors until then).
    pub(crate) leases: LeaseBook,
    /// One backoff for every fetch while claims fail with retryable errors.
    pub(crate) fetch_gate: FetchGate,
    /// Waiting worker fetches that acks can hand activities to.
    pub(crate) handoffs: Handoffs,
    /// Long-poll wake-ups: within this process always, between processes in `Listen` mode.
    wakes: Wakes,
    /// Sets a changed password on the pools (None without `options.password`).
    password_follower: Option<PasswordFollower>,
    pub(crate) gauge_refresh: crate::metrics::GaugeRefresh,
}

impl PostgresProvider {
    /// Connect with default options and the default schema (`steadfast`).
    pub async fn connect(database_url: &str) -> Result<Self, SetupError> {
        Self::connect_with_options(ProviderOptions::new(database_url)).await
    }

    /// Connect with default options in `schema` (created if missing).
    pub async fn connect_with_schema(database_url: &str, schema: &str) -> Result<Self, SetupError> {
        Self::connect_with_options(ProviderOptions::new(database_url).with_schema(schema)).await
    }

    /// Connect with explicit options. Validates them, connects, applies migrations (unless
    /// disabled) and, in [`PollingMode::Listen`], starts listening for enqueues.
    pub async fn connect_with_options(options: ProviderOptions) -> Result<Self, SetupError> {
        // Every message that leaves set-up passes the scrubber: sqlx and the server may
        // quote parts of the URL (or, from a hostile server, anything at all).
        let scrubber = Scrubber::new(&options.database_url);
        Self::connect_scrubbed(options, &scrubber)
            .await
            .map_err(|e| match e {
                SetupError::InvalidOptions(m) => SetupError::InvalidOptions(scrubber.scrub(&m)),
                SetupError::Connect(m) => SetupError::Connect(scrubber.scrub(&m)),
                SetupError::Migration(m) => SetupError::Migration(scrubber.scrub(&m)),
            })
    }

    async fn connect_scrubbed(
        options: ProviderOptions,
        scrubber: &Scrubber,
    ) -> Result<Self, SetupError> {
        options.validate().map_err(SetupError::InvalidOptions)?;
        let schema = SchemaName::parse(&options.schema).map_err(SetupError::InvalidOptions)?;
        let connect_error = |e: sqlx::Error| SetupError::Connect(e.to_string());
        let mut connect = PgConnectOptions::from_str(&options.database_url)
            .map_err(|e| SetupError::InvalidOptions(format!("database_url: {e}")))?;
        // The URL's `application_name` (or PGAPPNAME) names the process in
        // pg_stat_activity; without one, the connections say what they are.
        if connect.get_application_name().is_none() {
            connect = connect.application_name("steadfast");
        }
        if let Some(feed) = &options.password {
            connect = connect.password(&feed.current());
        }
        let session_free = options.polling == PollingMode::SessionFree;
        if session_free {
            connect = connect.statement_cache_capacity(0);
        } else {
            let lock_timeout = format!("{}ms", options.statement_lock_timeout.as_millis());
            connect = connect.options([("lock_timeout", lock_timeout.as_str())]);
            if let Some(t) = options.statement_timeout {
                let timeout = format!("{}ms", t.as_millis());
                connect = connect.options([("statement_timeout", timeout.as_str())]);
            }
        }
        // Keep two connections open: opening one (TLS negotiation included) costs ~100 ms
        // here, which would otherwise land inside the first claims after start-up.
        let pool = PgPoolOptions::new()
            // sqlx pings every connection before handing it out: one more round trip per
            // statement. A connection the server dropped fails its next statement instead,
            // which every caller already handles as a retryable error; only connections
            // idle long enough for a firewall or pooler to have cut them are pinged.
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for >= PING_IDLE_AFTER {
                        sqlx::Connection::ping(conn).await?;
                    }
                    Ok(true)
                })
            })
            .min_connections(2)
            .max_connections(options.max_connections)
            .acquire_timeout(options.acquire_timeout)
            .connect_with(connect.clone())
            .await
            .map_err(connect_error)?;
        crate::migrate::run(&pool, &schema, options.run_migrations).await?;
        let local = LocalWakes::for_provider(&connect, &schema, options.share_wakes_in_process);
        let wakes = if session_free {
            Wakes::in_process(local)
        } else {
            Wakes::start(local, &pool, connect, &schema, scrubber.clone()).await?
        };
        let password_follower = options.password.as_ref().map(|feed| {
            let mut pools = vec![pool.clone()];
            pools.extend(wakes.publisher_pool());
            PasswordFollower::start(feed, pools)
        });
        let q = Queries::render(&schema);
        // Open the kept connections now and touch the queue tables on each, so neither
        // connection set-up nor post-migration cache rebuilds land inside a claim (each in
        // a transaction, which pins one server connection behind a pooler).
        let warm = |pool: PgPool, sql: String| async move {
            let mut tx = pool.begin().await?;
            sqlx::query(&sql)
                .persistent(false)
                .execute(&mut *tx)
                .await?;
            tx.commit().await
        };
        let (a, b) = tokio::join!(
            warm(pool.clone(), q.warm_up.clone()),
            warm(pool.clone(), q.warm_up.clone())
        );
        a.map_err(connect_error)?;
        b.map_err(connect_error)?;
        let in_flight = TaskTracker::new();
        let give_back_with =
            |sql: &str| GiveBack::new(pool.clone(), sql, session_free, in_flight.clone());
        let give_back = give_back_with(&q.orch_claim_give_back);
        let worker_give_back = give_back_with(&q.worker_give_back);
        Ok(Self {
            in_flight,
            q,
            admin_q: AdminQueries::render(&schema),
            give_back,
            worker_give_back,
            pool,
            schema,
            options,
            diagnostics: DiagnosticSink::new(),
            orphan_sweep: OrphanSweep::new(),
            leases: LeaseBook::default(),
            fetch_gate: FetchGate::default(),
            handoffs: Handoffs::default(),
            wakes,
            password_follower,
            gauge_refresh: Default::default(),
        })
    }

    /// Subscribe to typed diagnostics (poison dispositions, ceilings, rejected acks,
    /// exhausted claims). Each subscriber sees every diagnostic raised after it
    /// subscribed; a slow subscriber may lag and skip (see `broadcast::Receiver`).
    pub fn subscribe(&self) -> broadcast::Receiver<Diagnostic> {
        self.diagnostics.subscribe()
    }

    /// The options this provider runs with.
    pub fn options(&self) -> &ProviderOptions {
        &self.options
    }

    /// The schema this provider's tables live in.
    pub fn schema(&self) -> &str {
        self.schema.as_str()
    }

    /// The underlying pool, for tests and tooling.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Stop listening, let claims still in flight finish and give back those whose fetch
    /// was cancelled (waiting at most the acquire timeout for that), and close the pool
    /// (waits for connections in use to be returned). Call it after the runtime on this
    /// provider has shut down.
    pub async fn close(&self) {
        self.wakes.stop();
        if let Some(follower) = &self.password_follower {
            follower.stop();
        }
        self.in_flight.close();
        let _ = tokio::time::timeout(self.options.acquire_timeout, self.in_flight.wait()).await;
        let deadline = tokio::time::Instant::now() + self.options.acquire_timeout;
        close_fully(&self.pool, deadline).await;
        if let Some(publisher_pool) = self.wakes.publisher_pool() {
            // The publisher task, aborted above, may have been holding its connection.
            close_fully(&publisher_pool, deadline).await;
        }
    }

    /// `PollingMode::SessionFree`: no session state (no statement cache, no LISTEN).
    pub(crate) fn session_free(&self) -> bool {
        self.options.polling == PollingMode::SessionFree
    }

    /// Instance ids whose execution just ended (cut to 1000 characters; "" when
    /// notifications may have been lost).
    pub(crate) fn ended_executions(&self) -> broadcast::Receiver<Arc<str>> {
        self.wakes.ended()
    }

    /// Whether other processes' enqueues and ended executions are heard (not in
    /// session-free mode).
    pub(crate) fn hears_other_processes(&self) -> bool {
        self.wakes.across_processes()
    }

    /// The enqueue wake-up of `queue`.
    pub(crate) fn enqueue_wake(&self, queue: QueueKind) -> Arc<crate::queue_wake::QueueWake> {
        self.wakes.queue(queue)
    }

    /// This process's wake-ups as this provider sees them (`wake.rs`).
    pub(crate) fn wakes(&self) -> &Wakes {
        &self.wakes
    }

    /// Work became visible on `queues` by a write that has committed (`wake.rs`).
    pub(crate) fn enqueued(&self, queues: Enqueued) {
        self.wakes.enqueued(queues);
    }

    /// A turn's ack committed, ending its instance's lease (`queue_wake.rs`).
    pub(crate) fn turn_acked(&self) {
        self.wakes.turn_acked();
    }

    /// A committed write ended an execution of `instance`: wake its waiters (`wake.rs`).
    pub(crate) fn announce_end(&self, instance: &str) {
        self.wakes.ended_execution(instance);
    }

    pub(crate) fn query<'a>(&self, sql: &'a str) -> Query<'a, Postgres, PgArguments> {
        sqlx::query(sql).persistent(!self.session_free())
    }

    pub(crate) fn scalar<'a, O>(&self, sql: &'a str) -> QueryScalar<'a, Postgres, O, PgArguments>
    where
        (O,): for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>,
    {
        sqlx::query_scalar(sql).persistent(!self.session_free())
    }

    pub(crate) async fn begin(
        &self,
        operation: &str,
    ) -> Result<Transaction<'static, Postgres>, duroxide::providers::ProviderError> {
        self.pool.begin().await.map_err(|e| db_error(operation, e))
    }
}

/// Close `pool` and every connection it has, or give up at `deadline`. sqlx's close can
/// miss a connection whose return to the pool raced it (the return saw the pool open, then
/// queued the connection idle after close had emptied the idle queue): it would stay open
/// as long as the pool lives. So close again until none is left; each round returns at
/// once when nothing is in use.
async fn close_fully(pool: &PgPool, deadline: tokio::time::Instant) {
    pool.close().await;
    while pool.size() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(CLOSE_RECHECK).await;
        pool.close().await;
    }
}
