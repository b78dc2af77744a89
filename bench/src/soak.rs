//! Scenario `soak` (not part of `all`): the throughput scenario's trivial workload at one
//! dispatcher count (the first of `--dispatchers`, default 16) for `--soak-minutes` on one
//! schema, sampled every 30 s: orchestrations/s, write-ahead log written, and for each of
//! the provider's tables its live and dead rows, its size on disk and how often
//! (auto)vacuum has visited it. A one-minute run cannot show whether the rate holds while
//! dead rows pile up (autovacuum off) or are cleaned (on), nor the log rate over time.
//!
//! The server's vacuum and checkpoint settings and the tables' own options are recorded;
//! the server's are never changed (set them with `ALTER SYSTEM` and `pg_reload_conf()`
//! before the run). `--soak-table-settings recommended` applies `docs/capacity.md`'s
//! per-table autovacuum settings (section 2) to the run's schema before it starts.
//! Completed instances are not deleted, so `history`, `instances` and `executions` grow
//! with the run as they would in an application that keeps them.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use duroxide::Client;
use serde_json::{Value, json};
use sqlx::Row;

use crate::common::{self, Env, Kind, progress, round2};
use crate::driver::ClosedLoop;
use crate::probe::Probe;

const IN_FLIGHT: usize = 64;

/// `docs/capacity.md` section 2, "What we recommend": vacuum the hot tables on a fixed
/// number of dead rows, unthrottled.
const RECOMMENDED_TABLE_SETTINGS: &[(&str, &str)] = &[
    (
        "orchestrator_queue",
        "autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0.05",
    ),
    (
        "worker_queue",
        "autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0.05",
    ),
    (
        "instance_leases",
        "autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0.02",
    ),
    (
        "ready_hints",
        "autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0",
    ),
];

const SERVER_SETTINGS: &[&str] = &[
    "autovacuum",
    "autovacuum_naptime",
    "autovacuum_vacuum_threshold",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "checkpoint_timeout",
    "max_wal_size",
    "full_page_writes",
    "wal_compression",
];

struct Cfg {
    dispatchers: usize,
    duration: Duration,
    sample_every: Duration,
}

fn cfg(env: &Env) -> Cfg {
    let dispatchers = env
        .throughput_dispatchers
        .as_ref()
        .and_then(|d| d.first().copied())
        .unwrap_or(16);
    if env.smoke {
        Cfg {
            dispatchers: dispatchers.min(2),
            duration: Duration::from_secs(3),
            sample_every: Duration::from_secs(1),
        }
    } else {
        Cfg {
            dispatchers,
            duration: Duration::from_secs_f64(env.soak_minutes * 60.0),
            sample_every: Duration::from_secs(30),
        }
    }
}

async fn server_settings(pool: &sqlx::PgPool) -> Value {
    let mut v = serde_json::Map::new();
    for name in SERVER_SETTINGS {
        if let Ok(s) = sqlx::query_scalar::<_, String>("SELECT current_setting($1)")
            .bind(name)
            .fetch_one(pool)
            .await
        {
            v.insert(name.to_string(), json!(s));
        }
    }
    Value::Object(v)
}

/// Each table of `schema` with its storage options (`fillfactor`, per-table autovacuum).
async fn table_options(pool: &sqlx::PgPool, schema: &str) -> Result<Value> {
    let rows = sqlx::query(
        "SELECT c.relname::text, COALESCE(array_to_string(c.reloptions, ', '), '')
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind = 'r' ORDER BY 1",
    )
    .bind(schema)
    .fetch_all(pool)
    .await?;
    let mut v = serde_json::Map::new();
    for r in rows {
        v.insert(r.get::<String, _>(0), json!(r.get::<String, _>(1)));
    }
    Ok(Value::Object(v))
}

/// Per table: live rows, dead rows, bytes on disk (indexes and TOAST included), vacuums.
async fn tables(pool: &sqlx::PgPool, schema: &str) -> Result<Value> {
    let rows = sqlx::query(
        "SELECT relname::text, n_live_tup, n_dead_tup, pg_total_relation_size(relid),
                autovacuum_count + vacuum_count
         FROM pg_stat_user_tables WHERE schemaname = $1 ORDER BY 1",
    )
    .bind(schema)
    .fetch_all(pool)
    .await?;
    let mut v = serde_json::Map::new();
    for r in rows {
        v.insert(
            r.get::<String, _>(0),
            json!({
                "live": r.get::<i64, _>(1),
                "dead": r.get::<i64, _>(2),
                "bytes": r.get::<i64, _>(3),
                "vacuums": r.get::<i64, _>(4),
            }),
        );
    }
    Ok(Value::Object(v))
}

async fn wal_lsn(pool: &sqlx::PgPool) -> Result<i64> {
    Ok(
        sqlx::query_scalar("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::int8")
            .fetch_one(pool)
            .await?,
    )
}

pub async fn run(env: &Env, kinds: &[Kind]) -> Result<Value> {
    if !kinds.contains(&Kind::Steadfast) {
        anyhow::bail!("soak: runs steadfast only (add --provider steadfast)");
    }
    let c = cfg(env);
    let admin = common::admin_pool(env).await?;
    let built = common::build(env, Kind::Steadfast, "soak").await?;
    if env.soak_recommended_table_settings {
        for (table, settings) in RECOMMENDED_TABLE_SETTINGS {
            let sql = format!("ALTER TABLE \"{}\".{table} SET ({settings})", built.schema);
            sqlx::query(&sql).execute(&admin).await?;
        }
    }
    let settings = server_settings(&admin).await;
    let options = table_options(&admin, &built.schema).await?;
    let (probe, rx) = Probe::reporting(built.provider.clone());
    let stats = probe.stats.clone();
    let rt = common::start_runtime(
        probe.clone(),
        crate::throughput::runtime_options(c.dispatchers, c.dispatchers),
    )
    .await;
    let client = Arc::new(Client::new(probe.clone()));
    let driver = ClosedLoop::spawn(client, "s".into(), IN_FLIGHT, rx);
    progress(&format!(
        "soak: {} dispatchers for {:.1} min, sampled every {} s; server settings {settings}",
        c.dispatchers,
        c.duration.as_secs_f64() / 60.0,
        c.sample_every.as_secs()
    ));
    let mut samples = Vec::new();
    let (mut at, mut wal) = (stats.now_ms(), wal_lsn(&admin).await?);
    let mut server_cpu = common::cpu_seconds().map(|(_, server)| server);
    let mut next = tokio::time::Instant::now();
    let end = next + c.duration;
    while next < end {
        next += c.sample_every;
        tokio::time::sleep_until(next).await;
        let (now, wal_now) = (stats.now_ms(), wal_lsn(&admin).await?);
        let done = stats.completions_between(at, now);
        let secs = (now - at) as f64 / 1000.0;
        let server_cpu_now = common::cpu_seconds().map(|(_, server)| server);
        let postgres_ms = match (server_cpu, server_cpu_now) {
            (Some(a), Some(b)) if done > 0 => json!(round2((b - a) * 1000.0 / done as f64)),
            _ => Value::Null,
        };
        let sample = json!({
            "t_s": round2(now as f64 / 1000.0),
            "orchestrations": done,
            "orchestrations_per_s": round2(done as f64 / secs),
            "wal_bytes_per_s": round2((wal_now - wal) as f64 / secs),
            "wal_bytes_per_orchestration": round2((wal_now - wal) as f64 / done.max(1) as f64),
            "postgres_cpu_ms_per_orchestration": postgres_ms,
            "tables": tables(&admin, &built.schema).await?,
        });
        progress(&format!(
            "soak: t {:.0} s: {} orch/s, {} kB of log per s",
            now as f64 / 1000.0,
            sample["orchestrations_per_s"],
            round2((wal_now - wal) as f64 / secs / 1024.0)
        ));
        samples.push(sample);
        (at, wal, server_cpu) = (now, wal_now, server_cpu_now);
    }
    driver.stop();
    rt.shutdown(Some(env.shutdown_grace_ms())).await;
    admin.close().await;
    common::teardown(env, built).await;
    let rates: Vec<f64> = samples
        .iter()
        .filter_map(|s| s["orchestrations_per_s"].as_f64())
        .collect();
    if rates.iter().all(|r| *r == 0.0) {
        anyhow::bail!("soak: no orchestration completed");
    }
    Ok(json!({
        "dispatchers": c.dispatchers,
        "in_flight_trivial": IN_FLIGHT,
        "duration_s": round2(c.duration.as_secs_f64()),
        "sample_every_s": c.sample_every.as_secs(),
        "server_settings": settings,
        "table_options": options,
        "first_rate": rates.first(),
        "last_rate": rates.last(),
        "samples": samples,
    }))
}
