//! Scenario: trivial throughput with the runtimes in child processes (`fleet.rs`), to check
//! `docs/capacity.md`'s model across processes: P processes of D orchestration and D worker
//! dispatchers each, all on one schema, long polling (runtime defaults otherwise). This
//! process runs only the client: a closed loop keeps 64 one-activity orchestrations in
//! flight, started as the children report completions; orchestrations/s counted after a
//! warm-up. Per orchestration: the database's transactions and rows written (whole run,
//! fresh schema), steadfast's claim counts summed over the children, and the CPU of every
//! `postgres` process over the window. Wake-ups cross
//! processes by NOTIFY, and an activity is handed out (`src/handoff.rs`) only to a fetch of
//! the process whose turn scheduled it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;
use duroxide::Client;
use serde_json::{Value, json};
use steadfast_pg::PollingMode;
use tokio::sync::mpsc;

use crate::claim_counts;
use crate::common::{self, Env, Kind, progress, round2};
use crate::driver::ClosedLoop;
use crate::fleet::{Fleet, FleetSpec};
use crate::probe::ProbeStats;

const IN_FLIGHT: usize = 64;

struct Cfg {
    processes: Vec<usize>,
    dispatchers_per_process: usize,
    warmup: Duration,
    window: Duration,
}

fn cfg(env: &Env) -> Cfg {
    if env.smoke {
        Cfg {
            processes: vec![2],
            dispatchers_per_process: 2,
            warmup: Duration::from_millis(500),
            window: Duration::from_millis(1000),
        }
    } else {
        Cfg {
            processes: env.process_counts.clone().unwrap_or(vec![1, 2, 4, 8]),
            dispatchers_per_process: 4,
            warmup: Duration::from_secs(2),
            window: Duration::from_secs(5),
        }
    }
}

async fn one_run(env: &Env, kind: Kind, processes: usize, c: &Cfg) -> Result<Value> {
    let built = common::build(&env.client_only(), kind, &format!("pr{processes}")).await?;
    let work_before = common::db_work(env, &built.schema).await?;
    let client = Arc::new(Client::new(built.provider.clone()));
    let (tx, rx) = mpsc::unbounded_channel();
    let stats = Arc::new(ProbeStats::new());
    let spec = FleetSpec {
        env,
        kind,
        schema: &built.schema,
        processes,
        dispatchers_per_process: c.dispatchers_per_process,
        workers_per_process: c.dispatchers_per_process,
        lease: Duration::ZERO,
        hot: None,
        overrun: Duration::ZERO,
        long_poll: true,
    };
    let fleet = match Fleet::start(spec, stats.clone(), tx).await {
        Ok(f) => f,
        Err(e) => {
            common::teardown(env, built).await;
            return Err(e);
        }
    };
    let t0 = stats.now_ms();
    let driver = ClosedLoop::spawn(client, "p".into(), IN_FLIGHT, rx);
    tokio::time::sleep(c.warmup).await;
    let server_from = common::cpu_seconds().map(|(_, server)| server);
    tokio::time::sleep(c.window).await;
    let server_to = common::cpu_seconds().map(|(_, server)| server);
    let end = stats.now_ms();
    driver.stop();
    let from = t0 + c.warmup.as_millis() as u32;
    let done = stats.completions_between(from, end);
    let secs = (end - from) as f64 / 1000.0;
    let stopped = fleet.stop(&stats, &mut BTreeMap::new()).await;
    let total = stats.counters.completed.load(Ordering::Relaxed);
    let per_orchestration =
        match common::db_work_per_orchestration(env, &built, work_before, total).await? {
            Some(mut work) => {
                if let Ok(claims) = &stopped {
                    let claims = claim_counts::per_orchestration(&BTreeMap::new(), claims, total);
                    work.insert("claims".into(), claims);
                }
                Value::Object(work)
            }
            None => Value::Null,
        };
    let postgres_ms = match (server_from, server_to) {
        (Some(a), Some(b)) if done > 0 => json!(round2((b - a) * 1000.0 / done as f64)),
        _ => Value::Null,
    };
    common::teardown(env, built).await;
    stopped?;
    if done == 0 {
        anyhow::bail!(
            "{} with {processes} processes: no orchestration completed",
            kind.name()
        );
    }
    Ok(json!({
        "processes": processes,
        "dispatchers_per_process": c.dispatchers_per_process,
        "dispatchers": processes * c.dispatchers_per_process,
        "orchestrations": done,
        "window_s": round2(secs),
        "orchestrations_per_s": round2(done as f64 / secs),
        "start_errors": driver.start_errors.load(Ordering::Relaxed),
        "ack_rejections": stats.counters.ack_rejected.load(Ordering::Relaxed),
        "database_work_per_orchestration": per_orchestration,
        "postgres_cpu_ms_per_orchestration": postgres_ms,
    }))
}

pub async fn run(env: &Env, kinds: &[Kind]) -> Result<Value> {
    let c = cfg(env);
    let mut per = serde_json::Map::new();
    for &kind in kinds {
        let mut rows = Vec::new();
        for &p in &c.processes {
            let v = one_run(env, kind, p, &c).await?;
            progress(&format!(
                "processes {} {p}x{}: {} orch/s, per orchestration {}, postgres CPU {} ms",
                kind.name(),
                c.dispatchers_per_process,
                v["orchestrations_per_s"],
                v["database_work_per_orchestration"],
                v["postgres_cpu_ms_per_orchestration"]
            ));
            rows.push(v);
        }
        per.insert(kind.name().into(), Value::Array(rows));
    }
    Ok(json!({
        "providers": per,
        "in_flight_trivial": IN_FLIGHT,
        "processes": c.processes,
        "dispatchers_per_process": c.dispatchers_per_process,
        "polling": match env.polling {
            PollingMode::Listen => "long (runtime defaults)",
            PollingMode::SessionFree => "session-free (the runtime short-polls)",
        },
    }))
}
