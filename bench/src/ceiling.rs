//! Scenario 4: what this machine's PostgreSQL can do for a minimal `SKIP LOCKED` queue, so
//! the providers' throughput can be expressed as a fraction of it.
//!
//! Table `q(id bigserial primary key, payload text, locked_until timestamptz, lock_token
//! bigint)`. One job = a claim (`UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED
//! LIMIT 1) RETURNING id`, its own commit) and an ack (`DELETE … WHERE id AND lock_token`,
//! its own commit): the same two round trips and two commits a lease-based queue needs.
//! Variants: claim+ack on a pre-filled queue, and enqueue+claim+ack (three commits per job,
//! closer to an orchestration turn, which always enqueues something). Clients are tokio tasks
//! on one sqlx pool, the same client stack as both providers. If `pgbench` is on PATH the
//! claim+ack script also runs under pgbench (C client, prepared statements).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};

use crate::common::{self, Env, progress, round2};

struct Cfg {
    clients: Vec<usize>,
    duration: Duration,
    prefill: i64,
}

fn cfg(env: &Env) -> Cfg {
    if env.smoke {
        Cfg {
            clients: vec![8],
            duration: Duration::from_secs(1),
            prefill: 10_000,
        }
    } else {
        Cfg {
            clients: vec![8, 32],
            duration: Duration::from_secs(8),
            // 30,000 jobs/s for the whole window: run 54 drained 40,000 in under 8 s.
            prefill: 240_000,
        }
    }
}

fn claim_sql(schema: &str) -> String {
    format!(
        "UPDATE \"{schema}\".q SET locked_until = clock_timestamp() + interval '30 seconds', lock_token = $1 \
         WHERE id = (SELECT id FROM \"{schema}\".q \
                     WHERE locked_until IS NULL OR locked_until < clock_timestamp() \
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING id"
    )
}

async fn setup(pool: &sqlx::PgPool, schema: &str, prefill: i64) -> Result<()> {
    for sql in [
        format!("CREATE SCHEMA \"{schema}\""),
        format!(
            "CREATE TABLE \"{schema}\".q (id bigserial PRIMARY KEY, payload text NOT NULL, \
             locked_until timestamptz, lock_token bigint)"
        ),
        format!(
            "INSERT INTO \"{schema}\".q (payload) SELECT 'job ' || g FROM generate_series(1, {prefill}) g"
        ),
        format!("VACUUM ANALYZE \"{schema}\".q"),
    ] {
        sqlx::query(&sql)
            .execute(pool)
            .await
            .with_context(|| sql.clone())?;
    }
    Ok(())
}

async fn sqlx_run(
    env: &Env,
    clients: usize,
    duration: Duration,
    prefill: i64,
    enqueue: bool,
) -> Result<Value> {
    let schema = common::unique_schema(env, if enqueue { "ceil_e" } else { "ceil" });
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(clients as u32)
        .min_connections(clients as u32)
        .connect(&env.database_url)
        .await?;
    setup(&pool, &schema, if enqueue { 0 } else { prefill }).await?;
    let claim = claim_sql(&schema);
    let ack = format!("DELETE FROM \"{schema}\".q WHERE id = $1 AND lock_token = $2");
    let insert = format!("INSERT INTO \"{schema}\".q (payload) VALUES ($1)");
    let jobs = Arc::new(AtomicU64::new(0));
    let empty = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (pool, claim, ack, insert) = (pool.clone(), claim.clone(), ack.clone(), insert.clone());
        let (jobs, empty, errors, stop) =
            (jobs.clone(), empty.clone(), errors.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let token = c as i64 + 1;
            let mut lat = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                if enqueue
                    && sqlx::query(&insert)
                        .bind("job")
                        .execute(&pool)
                        .await
                        .is_err()
                {
                    errors.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                match sqlx::query_scalar::<_, i64>(&claim)
                    .bind(token)
                    .fetch_optional(&pool)
                    .await
                {
                    Ok(Some(id)) => {
                        match sqlx::query(&ack).bind(id).bind(token).execute(&pool).await {
                            Ok(_) => {
                                jobs.fetch_add(1, Ordering::Relaxed);
                                lat.push(t.elapsed().as_micros() as u32);
                            }
                            Err(_) => {
                                errors.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                    }
                    Ok(None) => {
                        empty.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(_) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            lat
        }));
    }
    let t0 = Instant::now();
    tokio::time::sleep(duration).await;
    stop.store(true, Ordering::Relaxed);
    let mut lat = Vec::new();
    for t in tasks {
        lat.extend(t.await.unwrap_or_default());
    }
    let secs = t0.elapsed().as_secs_f64();
    let n = jobs.load(Ordering::Relaxed);
    // A pre-filled queue that ran dry measured less than the window: a lower bound only.
    let left: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM \"{schema}\".q"))
        .fetch_one(&pool)
        .await
        .unwrap_or(-1);
    if !enqueue && left == 0 {
        progress(&format!(
            "ceiling: warning: the {prefill}-job queue ran dry; {n} jobs is a lower bound"
        ));
    }
    pool.close().await;
    common::drop_schema(env, &schema).await;
    if n == 0 {
        anyhow::bail!("ceiling: no job completed");
    }
    Ok(json!({
        "client": "sqlx",
        "variant": if enqueue { "enqueue+claim+ack" } else { "claim+ack" },
        "clients": clients,
        "duration_s": round2(secs),
        "jobs": n,
        "jobs_per_s": round2(n as f64 / secs),
        "empty_claims": empty.load(Ordering::Relaxed),
        "jobs_left_in_queue": left,
        "errors": errors.load(Ordering::Relaxed),
        "job_latency": common::latency_json(&mut lat),
    }))
}

async fn pgbench_run(env: &Env, clients: usize, duration: Duration, prefill: i64) -> Result<Value> {
    let schema = common::unique_schema(env, "ceil_pgb");
    let pool = common::admin_pool(env).await?;
    // Enough rows for pgbench's faster client: it must never find the queue empty.
    setup(&pool, &schema, prefill * 3).await?;
    let dir = std::env::temp_dir().join(format!("{schema}-pgbench"));
    std::fs::create_dir_all(&dir)?;
    let script = dir.join("claim_ack.sql");
    std::fs::write(
        &script,
        format!(
            "\\set token random(1, 1000000)\n{} \\gset\nDELETE FROM \"{schema}\".q WHERE id = :id AND lock_token = :token;\n",
            claim_sql(&schema).replace("$1", ":token")
        ),
    )?;
    let output = tokio::process::Command::new("pgbench")
        .args([
            "-n",
            "-M",
            "prepared",
            "-c",
            &clients.to_string(),
            "-j",
            "2",
            "-T",
            &duration.as_secs().max(1).to_string(),
            "-f",
            &script.to_string_lossy(),
            &env.database_url,
        ])
        .output()
        .await
        .context("run pgbench")?;
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    std::fs::remove_dir_all(&dir).ok();
    pool.close().await;
    common::drop_schema(env, &schema).await;
    let tps = stdout
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse::<f64>().ok());
    let latency = stdout
        .lines()
        .find(|l| l.starts_with("latency average"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<f64>().ok());
    if tps.is_none() {
        progress(&format!(
            "ceiling: pgbench gave no tps (exit {:?}): {}",
            output.status.code(),
            stderr.lines().last().unwrap_or("")
        ));
    }
    Ok(json!({
        "client": "pgbench",
        "variant": "claim+ack",
        "clients": clients,
        "duration_s": duration.as_secs_f64(),
        "jobs_per_s": tps.map(round2),
        "latency_avg_ms": latency,
        "exit_code": output.status.code(),
    }))
}

pub async fn run(env: &Env) -> Result<Value> {
    let c = cfg(env);
    let mut runs = Vec::new();
    for &clients in &c.clients {
        for enqueue in [false, true] {
            let r = sqlx_run(env, clients, c.duration, c.prefill, enqueue).await?;
            progress(&format!(
                "ceiling: sqlx {} with {clients} clients: {} jobs/s (p99 {} ms, {} empty, {} errors)",
                r["variant"].as_str().unwrap_or(""),
                r["jobs_per_s"],
                r["job_latency"]["p99_ms"],
                r["empty_claims"],
                r["errors"]
            ));
            runs.push(r);
        }
    }
    let pgbench_available = std::process::Command::new("pgbench")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if pgbench_available {
        let clients = *c.clients.last().unwrap_or(&8);
        match pgbench_run(env, clients, c.duration, c.prefill).await {
            Ok(r) => {
                progress(&format!(
                    "ceiling: pgbench claim+ack with {clients} clients: {} jobs/s",
                    r["jobs_per_s"]
                ));
                runs.push(r);
            }
            Err(e) => progress(&format!("ceiling: pgbench failed: {e:#}")),
        }
    } else {
        progress("ceiling: pgbench not on PATH, skipped");
    }
    let best = |variant: &str, client: &str| {
        runs.iter()
            .filter(|r| r["variant"] == variant && r["client"] == client)
            .filter_map(|r| r["jobs_per_s"].as_f64())
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
    };
    Ok(json!({
        "runs": runs,
        "claim_ack_jobs_per_s": best("claim+ack", "sqlx"),
        "enqueue_claim_ack_jobs_per_s": best("enqueue+claim+ack", "sqlx"),
        "pgbench_claim_ack_jobs_per_s": best("claim+ack", "pgbench"),
    }))
}
