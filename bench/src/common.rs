//! Shared pieces: the providers under test, schemas, workloads, statistics, progress output.

use std::sync::Arc;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use duroxide::providers::Provider;
use duroxide::runtime::registry::ActivityRegistry;
use duroxide::{ActivityContext, OrchestrationContext, OrchestrationRegistry};
use rand::Rng;
use serde_json::{Value, json};
use steadfast_pg::{PollingMode, PostgresProvider, ProviderOptions, RedeliveryBackoff};

use crate::probe::FetchSample;

/// The runtime's `max_attempts` in every scenario, and steadfast's `claim.max_attempts`.
pub const MAX_ATTEMPTS: u32 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Steadfast,
    DuroxidePg,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Steadfast => "steadfast",
            Kind::DuroxidePg => "duroxide-pg",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        [Kind::Steadfast, Kind::DuroxidePg]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// Settings shared by every scenario of one invocation.
#[derive(Clone, Debug)]
pub struct Env {
    pub database_url: String,
    pub pool: u32,
    pub smoke: bool,
    pub run_tag: String,
    /// The livelock scenario's process layouts, in the order they run.
    pub livelock_topologies: Vec<Topology>,
    /// The throughput scenario's dispatcher counts, when not its default list.
    pub throughput_dispatchers: Option<Vec<usize>>,
    /// The processes scenario's process counts, when not its default list.
    pub process_counts: Option<Vec<usize>>,
    /// The soak scenario's length in minutes.
    pub soak_minutes: f64,
    /// `--soak-table-settings recommended`.
    pub soak_recommended_table_settings: bool,
    /// How steadfast's fetches wait (`--polling`; `Listen` unless asked).
    pub polling: PollingMode,
    /// `--pooler-url`: steadfast connects through this (a transaction-mode pooler such as
    /// PgBouncer); set-up, measurements and clean-up keep `database_url`.
    pub pooler_url: Option<String>,
}

/// `processes` processes with `dispatchers_per_process` orchestration dispatchers each, all
/// on one schema. 8 worker dispatchers in all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    pub processes: usize,
    pub dispatchers_per_process: usize,
}

impl Topology {
    pub const ONE_BY_32: Topology = Topology {
        processes: 1,
        dispatchers_per_process: 32,
    };
    pub const EIGHT_BY_4: Topology = Topology {
        processes: 8,
        dispatchers_per_process: 4,
    };

    pub fn name(self) -> String {
        format!("{}x{}", self.processes, self.dispatchers_per_process)
    }

    pub fn dispatchers(self) -> usize {
        self.processes * self.dispatchers_per_process
    }

    pub fn workers_per_process(self) -> usize {
        (8 / self.processes).max(1)
    }
}

/// The redelivery backoff steadfast runs with in every scenario: the product defaults.
impl Env {
    /// This process's settings when it runs only the client and child processes run the
    /// runtimes (`fleet.rs`): a small pool is enough.
    pub fn client_only(&self) -> Env {
        Env {
            pool: self.pool.min(4),
            ..self.clone()
        }
    }

    /// How long a runtime shutdown waits for in-flight turns (a hot-instance turn may be
    /// asleep in the probe for a whole lease).
    pub fn shutdown_grace_ms(&self) -> u64 {
        if self.smoke { 300 } else { 2_000 }
    }
}

pub fn steadfast_backoff() -> RedeliveryBackoff {
    RedeliveryBackoff::default()
}

pub fn backoff_json() -> Value {
    let b = steadfast_backoff();
    let schedule: Vec<f64> = (1..=MAX_ATTEMPTS)
        .map(|k| b.delay(k, 0.0).as_secs_f64() * 1000.0)
        .collect();
    json!({
        "base_ms": b.base.as_secs_f64() * 1000.0,
        "cap_ms": b.cap.as_secs_f64() * 1000.0,
        "jitter": b.jitter,
        "schedule_ms_without_jitter": schedule,
        "sum_ms_without_jitter": schedule.iter().sum::<f64>(),
        "sum_ms_max_jitter": schedule.iter().sum::<f64>() * (1.0 + b.jitter),
    })
}

/// Experiment knobs, not used by the published runs: `STEADFAST_BENCH_FANOUT` and
/// `STEADFAST_BENCH_MAX_CLAIM_ATTEMPTS` override steadfast's `claim.fanout` and
/// `claim.max_claim_attempts` (recorded in the results as `steadfast_claim_overrides`).
pub fn claim_overrides() -> (Option<u32>, Option<u32>) {
    let read = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u32>().ok());
    (
        read("STEADFAST_BENCH_FANOUT"),
        read("STEADFAST_BENCH_MAX_CLAIM_ATTEMPTS"),
    )
}

/// A provider under test, in its own fresh schema.
pub struct Built {
    pub schema: String,
    pub provider: Arc<dyn Provider>,
    pub steadfast: Option<Arc<PostgresProvider>>,
}

pub fn unique_schema(env: &Env, label: &str) -> String {
    let n: u32 = rand::thread_rng().r#gen();
    let tag: String = label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("sfb_{}_{}_{:06x}", env.run_tag, tag, n & 0xff_ffff).to_lowercase()
}

pub async fn build(env: &Env, kind: Kind, label: &str) -> Result<Built> {
    let schema = unique_schema(env, &format!("{label}_{}", kind.name()));
    connect(env, kind, schema, true).await
}

/// Connects a provider under test to `schema`. With `migrate`, the schema is created and
/// migrated if needed; without, steadfast-pg only checks it is current (child processes
/// join a schema their parent made, without queueing on the migration lock).
pub async fn connect(env: &Env, kind: Kind, schema: String, migrate: bool) -> Result<Built> {
    match kind {
        Kind::Steadfast => {
            let url = env.pooler_url.as_ref().unwrap_or(&env.database_url);
            let mut o = ProviderOptions::new(url.clone()).with_schema(schema.clone());
            o.max_connections = env.pool;
            o.polling = env.polling;
            o.run_migrations = migrate;
            o.claim.max_attempts = Some(MAX_ATTEMPTS);
            o.claim.redelivery_backoff = steadfast_backoff();
            let (fanout, tries) = claim_overrides();
            if let Some(f) = fanout {
                o.claim.fanout = f;
            }
            if let Some(t) = tries {
                o.claim.max_claim_attempts = t;
            }
            let p = Arc::new(
                PostgresProvider::connect_with_options(o)
                    .await
                    .context("connect steadfast-pg")?,
            );
            warm_pool(p.pool(), env.pool).await;
            Ok(Built {
                schema,
                provider: p.clone() as Arc<dyn Provider>,
                steadfast: Some(p),
            })
        }
        Kind::DuroxidePg => {
            // Pool size: DUROXIDE_PG_POOL_MAX, set in main() before any thread starts.
            let p =
                duroxide_pg::PostgresProvider::new_with_schema(&env.database_url, Some(&schema))
                    .await
                    .map_err(|e| anyhow::anyhow!("connect duroxide-pg: {e}"))?;
            warm_pool(p.pool(), env.pool).await;
            Ok(Built {
                schema,
                provider: Arc::new(p) as Arc<dyn Provider>,
                steadfast: None,
            })
        }
    }
}

/// Open every connection of a provider's pool before measuring. A new backend costs tens
/// of milliseconds of server CPU (more right after the schema's DDL); 32 of them opening at
/// once inside the first claims would otherwise dominate the first seconds of every run.
/// Connections the pool already holds are reused; each runs one trivial query.
async fn warm_pool(pool: &sqlx::PgPool, size: u32) {
    // Steadfast keeps one connection for LISTEN outside the pool's accounting; leave
    // headroom so warming never waits for a connection.
    let n = size.saturating_sub(1).max(1) as usize;
    let barrier = Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (pool, barrier) = (pool.clone(), barrier.clone());
        tasks.spawn(async move {
            let conn = tokio::time::timeout(Duration::from_secs(10), pool.acquire()).await;
            if let Ok(Ok(mut c)) = conn {
                let _ = sqlx::query("SELECT 1").execute(&mut *c).await;
                // Hold it until every task has one, so the pool opens n connections.
                let _ = tokio::time::timeout(Duration::from_secs(10), barrier.wait()).await;
                drop(c);
            } else {
                let _ = tokio::time::timeout(Duration::from_secs(10), barrier.wait()).await;
            }
        });
    }
    while tasks.join_next().await.is_some() {}
}

pub async fn admin_pool(env: &Env) -> Result<sqlx::PgPool> {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(2)
        .connect(&env.database_url)
        .await
        .context("connect to the database")
}

/// Drop a run's schema. Retried a few times: worker processes that are still stopping can
/// make the drop fail with a deadlock (seen with duroxide-pg's 8 × 4 livelock run).
pub async fn drop_schema(env: &Env, schema: &str) {
    let pool = match admin_pool(env).await {
        Ok(pool) => pool,
        Err(e) => return progress(&format!("warning: could not drop schema {schema}: {e}")),
    };
    let sql = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    for attempt in 1..=5 {
        match sqlx::query(&sql).execute(&pool).await {
            Ok(_) => break,
            Err(e) if attempt < 5 => {
                progress(&format!("dropping schema {schema} failed ({e}); retrying"));
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            }
            Err(e) => progress(&format!("warning: could not drop schema {schema}: {e}")),
        }
    }
    pool.close().await;
}

/// Close a provider and drop its schema.
pub async fn teardown(env: &Env, built: Built) {
    if let Some(p) = &built.steadfast {
        p.close().await;
    }
    let schema = built.schema.clone();
    drop(built);
    drop_schema(env, &schema).await;
}

// ---------------------------------------------------------------------------
// Workloads
// ---------------------------------------------------------------------------

pub const TRIVIAL: &str = "Trivial";
pub const NOOP: &str = "Noop";
pub const HOT_FANOUT: &str = "HotFanout";
pub const SESSION_STEPS: &str = "SessionSteps";
/// The activities a `SessionSteps` orchestration runs on its session, one after another.
pub const STEPS_PER_SESSION_ORCHESTRATION: usize = 4;

/// A runtime on `provider` with the bench's orchestrations and activities.
pub async fn start_runtime(
    provider: Arc<dyn Provider>,
    options: duroxide::RuntimeOptions,
) -> Arc<duroxide::runtime::Runtime> {
    let (activities, orchestrations) = registries();
    duroxide::runtime::Runtime::start_with_options(provider, activities, orchestrations, options)
        .await
}

/// `Trivial`: one activity, then complete. `HotFanout`: `rounds` times fan out `fanout`
/// activities and join them, then continue as new (runs until shutdown). `SessionSteps`:
/// [`STEPS_PER_SESSION_ORCHESTRATION`] activities one after another on the session its
/// input names, then complete.
pub fn registries() -> (ActivityRegistry, OrchestrationRegistry) {
    let activities = ActivityRegistry::builder()
        .register(NOOP, |_ctx: ActivityContext, input: String| async move {
            Ok(input)
        })
        .build();
    let orchestrations = OrchestrationRegistry::builder()
        .register(TRIVIAL, trivial)
        .register(HOT_FANOUT, hot_fanout)
        .register(SESSION_STEPS, session_steps)
        .build();
    (activities, orchestrations)
}

async fn trivial(ctx: OrchestrationContext, input: String) -> Result<String, String> {
    ctx.schedule_activity(NOOP, input).await
}

async fn session_steps(ctx: OrchestrationContext, session: String) -> Result<String, String> {
    let mut last = String::new();
    for step in 0..STEPS_PER_SESSION_ORCHESTRATION {
        last = ctx
            .schedule_activity_on_session(NOOP, step.to_string(), session.as_str())
            .await?;
    }
    Ok(last)
}

async fn hot_fanout(ctx: OrchestrationContext, input: String) -> Result<String, String> {
    let (fanout, rounds) = input
        .split_once('x')
        .and_then(|(a, b)| Some((a.parse::<usize>().ok()?, b.parse::<usize>().ok()?)))
        .ok_or_else(|| format!("bad input {input}"))?;
    for r in 0..rounds {
        let calls = (0..fanout)
            .map(|i| ctx.schedule_activity(NOOP, format!("{r}.{i}")))
            .collect::<Vec<_>>();
        for result in ctx.join(calls).await {
            result?;
        }
    }
    ctx.continue_as_new(input).await
}

// ---------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------

/// steadfast / duroxide-pg orchestrations/s at each dispatcher count, from a scenario's rows
/// per provider name (rows in the same dispatcher order for both).
pub fn ratios_by_dispatchers(per: &serde_json::Map<String, Value>) -> Vec<Value> {
    let (Some(Value::Array(s)), Some(Value::Array(d))) =
        (per.get("steadfast"), per.get("duroxide-pg"))
    else {
        return Vec::new();
    };
    s.iter()
        .zip(d)
        .map(|(a, b)| {
            json!({
                "dispatchers": a["dispatchers"],
                "orchestrations_per_s_steadfast_over_duroxide_pg": ratio(
                    a["orchestrations_per_s"].as_f64().unwrap_or(0.0),
                    b["orchestrations_per_s"].as_f64().unwrap_or(0.0)),
            })
        })
        .collect()
}

/// Nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64
}

/// Latency summary in milliseconds (microsecond resolution).
pub fn latency_json(micros: &mut [u32]) -> Value {
    micros.sort_unstable();
    let ms = |us: f64| us.round() / 1000.0;
    let mean = if micros.is_empty() {
        0.0
    } else {
        micros.iter().map(|&v| v as f64).sum::<f64>() / micros.len() as f64
    };
    json!({
        "count": micros.len(),
        "p50_ms": ms(percentile(micros, 50.0)),
        "p90_ms": ms(percentile(micros, 90.0)),
        "p99_ms": ms(percentile(micros, 99.0)),
        "max_ms": ms(micros.last().copied().unwrap_or(0) as f64),
        "mean_ms": ms(mean),
    })
}

/// Fetch statistics: all calls, calls that returned an item, empty calls.
pub fn fetch_json(samples: &[FetchSample]) -> Value {
    let mut all: Vec<u32> = samples.iter().map(|s| s.micros).collect();
    let mut found: Vec<u32> = samples
        .iter()
        .filter(|s| s.found)
        .map(|s| s.micros)
        .collect();
    let mut empty: Vec<u32> = samples
        .iter()
        .filter(|s| !s.found && !s.error)
        .map(|s| s.micros)
        .collect();
    let errors = samples.iter().filter(|s| s.error).count();
    let n = samples.len().max(1) as f64;
    json!({
        "calls": samples.len(),
        "found": found.len(),
        "empty": empty.len(),
        "errors": errors,
        "empty_fraction": empty.len() as f64 / n,
        "all": latency_json(&mut all),
        "found_calls": latency_json(&mut found),
        "empty_calls": latency_json(&mut empty),
    })
}

pub fn ratio(num: f64, den: f64) -> Value {
    if den > 0.0 && num.is_finite() {
        json!((num / den * 1000.0).round() / 1000.0)
    } else {
        Value::Null
    }
}

pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

// ---------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------

static START: OnceLock<Instant> = OnceLock::new();

pub fn start_clock() {
    let _ = START.set(Instant::now());
}

/// One progress line on stderr, prefixed with the time since the program started.
pub fn progress(msg: &str) {
    let t = START.get().map(|s| s.elapsed()).unwrap_or_default();
    eprintln!("[{:>7.1}s] {msg}", t.as_secs_f64());
}

pub fn epoch_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as u64
}

pub fn epoch_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

/// The database's own work counters: transactions (committed and rolled back) in the
/// whole database, rows written (inserted, updated, deleted) in `schema`'s tables, and the
/// server's write-ahead log position (bytes; the whole cluster's, so only meaningful on an
/// otherwise idle server). The server updates the first two when a backend goes idle or
/// exits, so read them after the provider's connections closed.
#[derive(Clone, Copy, Debug, Default)]
pub struct DbWork {
    pub transactions: i64,
    pub rows_written: i64,
    pub wal_bytes: i64,
}

/// Transactions and rows written per orchestration since `before`, over `completed`
/// orchestrations, read once `built`'s steadfast provider has closed (its connections report
/// their counters as they close; the server gets a moment), with `completed` and a note on
/// what they cover. None for duroxide-pg, whose pool cannot be closed from here.
pub async fn db_work_per_orchestration(
    env: &Env,
    built: &Built,
    before: DbWork,
    completed: u64,
) -> Result<Option<serde_json::Map<String, Value>>> {
    let Some(p) = &built.steadfast else {
        return Ok(None);
    };
    p.close().await;
    if let Some(url) = &env.pooler_url {
        pooler_reconnect(url).await;
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = db_work(env, &built.schema).await?;
    let per = |a: i64, b: i64| round2((a - b) as f64 / completed.max(1) as f64);
    let mut work = serde_json::Map::new();
    work.insert(
        "transactions".into(),
        json!(per(after.transactions, before.transactions)),
    );
    work.insert(
        "rows_written".into(),
        json!(per(after.rows_written, before.rows_written)),
    );
    work.insert(
        "wal_bytes".into(),
        json!(per(after.wal_bytes, before.wal_bytes).round()),
    );
    work.insert("completed".into(), json!(completed));
    work.insert(
        "note".into(),
        json!("whole run (warm-up included) over orchestrations completed; the instances still in flight at the end add their partial cost; transactions are the whole database's"),
    );
    Ok(Some(work))
}

/// The admin console of the PgBouncer at `url` (same query parameters), and the database
/// `url` names.
pub fn pooler_admin(url: &str) -> Option<(String, String)> {
    let (path, query) = match url.split_once('?') {
        Some((path, query)) => (path, format!("?{query}")),
        None => (url, String::new()),
    };
    let (base, db) = path.rsplit_once('/')?;
    Some((format!("{base}/pgbouncer{query}"), db.to_string()))
}

/// Runs `command` on the admin console of the PgBouncer at `url` (simple-query protocol,
/// which is all the console speaks); `None` if it cannot.
pub async fn pooler_admin_command(url: &str, command: &str) -> Option<Vec<sqlx::postgres::PgRow>> {
    use sqlx::{Connection, Executor};
    let (admin, _) = pooler_admin(url)?;
    let mut conn = sqlx::PgConnection::connect(&admin).await.ok()?;
    conn.fetch_all(command).await.ok()
}

/// Closes PgBouncer's server connections to the run's database: a backend that stays
/// idle holds up to 10 s of its table statistics, which `db_work` reads.
async fn pooler_reconnect(url: &str) {
    let Some((_, db)) = pooler_admin(url) else {
        return;
    };
    if pooler_admin_command(url, &format!("RECONNECT {db}"))
        .await
        .is_none()
    {
        progress("warning: PgBouncer's RECONNECT failed; rows written may be undercounted");
    }
}

pub async fn db_work(env: &Env, schema: &str) -> Result<DbWork> {
    let pool = admin_pool(env).await?;
    let row: (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT (xact_commit + xact_rollback)::int8 FROM pg_stat_database
                 WHERE datname = current_database()),
                (SELECT COALESCE(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::int8
                 FROM pg_stat_user_tables WHERE schemaname = $1),
                (pg_current_wal_lsn() - '0/0'::pg_lsn)::int8",
    )
    .bind(schema)
    .fetch_one(&pool)
    .await?;
    pool.close().await;
    Ok(DbWork {
        transactions: row.0,
        rows_written: row.1,
        wal_bytes: row.2,
    })
}

/// CPU seconds used so far by this process, and by every process named `postgres` (the
/// server's backends on this machine), from /proc; `None` off Linux.
pub fn cpu_seconds() -> Option<(f64, f64)> {
    fn ticks(stat: &str) -> Option<u64> {
        // Fields after the parenthesised command name: utime and stime are 12th and 13th.
        let rest = &stat[stat.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
    }
    const HZ: f64 = 100.0;
    let own = ticks(&std::fs::read_to_string("/proc/self/stat").ok()?)?;
    let mut server = 0;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let dir = entry.path();
        if std::fs::read_to_string(dir.join("comm")).is_ok_and(|c| c.trim() == "postgres") {
            server += std::fs::read_to_string(dir.join("stat"))
                .ok()
                .and_then(|s| ticks(&s))
                .unwrap_or(0);
        }
    }
    Some((own as f64 / HZ, server as f64 / HZ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pooler_admin_console_is_found_past_a_query_string() {
        assert_eq!(
            pooler_admin("postgres://u@h:6432/db"),
            Some(("postgres://u@h:6432/pgbouncer".into(), "db".into()))
        );
        assert_eq!(
            pooler_admin("postgres://u@h:6432/db?options=-c%20a/b&sslmode=disable"),
            Some((
                "postgres://u@h:6432/pgbouncer?options=-c%20a/b&sslmode=disable".into(),
                "db".into()
            ))
        );
    }
}
