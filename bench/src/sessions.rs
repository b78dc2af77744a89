//! Scenario 9: session activities. A closed loop keeps 64 `SessionSteps` orchestrations in
//! flight, each running four activities one after another on one of eight sessions
//! (`ctx.schedule_activity_on_session`), as an application whose agents each keep a
//! session would. A live session's items go only to its owner. With the runtime's default
//! owners (`worker_node_id` unset) every worker slot is an owner of its own, so each
//! activity after a session's first must reach the one slot that owns the session; with a
//! stable `worker_node_id` every slot of the runtime is the same owner. Both are run, at
//! 4 and 16 dispatchers (N orchestration and N worker dispatchers).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Result;
use duroxide::{Client, RuntimeOptions};
use serde_json::{Value, json};

use crate::claim_counts;
use crate::common::{
    self, Env, Kind, SESSION_STEPS, STEPS_PER_SESSION_ORCHESTRATION, progress, round2,
};
use crate::driver::ClosedLoop;
use crate::probe::Probe;
use crate::throughput::runtime_options;

const IN_FLIGHT: usize = 64;
/// Fewer than the runtime's `max_sessions_per_runtime` (10), so no slot is refused a session.
const SESSIONS: u64 = 8;

/// Who owns a session the runtime claims.
#[derive(Clone, Copy)]
enum Owners {
    /// duroxide's default: each worker slot is an owner (`work-<slot>-<runtime>`).
    PerSlot,
    /// `worker_node_id` set: every slot of the runtime is one owner.
    Stable,
}

impl Owners {
    fn name(self) -> &'static str {
        match self {
            Owners::PerSlot => "per-slot",
            Owners::Stable => "stable",
        }
    }

    fn worker_node_id(self) -> Option<String> {
        match self {
            Owners::PerSlot => None,
            Owners::Stable => Some("bench-node".into()),
        }
    }
}

struct Cfg {
    dispatchers: Vec<usize>,
    warmup: Duration,
    window: Duration,
}

fn cfg(env: &Env) -> Cfg {
    if env.smoke {
        Cfg {
            dispatchers: vec![2],
            warmup: Duration::from_millis(500),
            window: Duration::from_millis(1500),
        }
    } else {
        Cfg {
            dispatchers: vec![4, 16],
            warmup: Duration::from_secs(2),
            window: Duration::from_secs(8),
        }
    }
}

fn session_of(n: u64) -> String {
    format!("agent-{}", n % SESSIONS)
}

async fn one(env: &Env, kind: Kind, owners: Owners, n: usize, c: &Cfg) -> Result<Value> {
    let built = common::build(env, kind, &format!("se{n}")).await?;
    let (probe, rx) = Probe::reporting(built.provider.clone());
    let stats = probe.stats.clone();
    let claims_before = claim_counts::totals();
    let options = RuntimeOptions {
        worker_node_id: owners.worker_node_id(),
        ..runtime_options(n, n)
    };
    let rt = common::start_runtime(probe.clone(), options).await;
    let t0 = stats.now_ms();
    let driver = ClosedLoop::spawn_of(
        Arc::new(Client::new(probe.clone())),
        "se".into(),
        IN_FLIGHT,
        rx,
        SESSION_STEPS,
        session_of,
    );
    let measured = driver.run_window(&stats, t0, c.warmup, c.window).await;
    let (done, secs) = (measured.completed, measured.secs);
    rt.shutdown(Some(env.shutdown_grace_ms())).await;
    let cn = &stats.counters;
    let total = cn.completed.load(Ordering::Relaxed);
    let claims = built
        .steadfast
        .as_ref()
        .map(|_| claim_counts::per_orchestration(&claims_before, &claim_counts::totals(), total));
    let rate = done as f64 / secs;
    let v = json!({
        "dispatchers": n,
        "owners": owners.name(),
        "orchestrations": done,
        "window_s": round2(secs),
        "orchestrations_per_s": round2(rate),
        "activities_per_s": round2(rate * STEPS_PER_SESSION_ORCHESTRATION as f64),
        // Little's law over the closed loop: the mean time an orchestration took.
        "mean_orchestration_ms": if rate > 0.0 { round2(IN_FLIGHT as f64 / rate * 1000.0) } else { 0.0 },
        "start_errors": driver.start_errors.load(Ordering::Relaxed),
        "worker_fetch_found": cn.worker_fetch_found.load(Ordering::Relaxed),
        "worker_fetch_empty": cn.worker_fetch_empty.load(Ordering::Relaxed),
        "claims_per_orchestration": claims,
    });
    common::teardown(env, built).await;
    if total == 0 {
        anyhow::bail!(
            "{} {} x{n}: no orchestration completed",
            kind.name(),
            owners.name()
        );
    }
    Ok(v)
}

pub async fn run(env: &Env, kinds: &[Kind]) -> Result<Value> {
    let c = cfg(env);
    let mut out = serde_json::Map::new();
    for owners in [Owners::PerSlot, Owners::Stable] {
        let mut per = serde_json::Map::new();
        for &kind in kinds {
            let mut rows = Vec::new();
            for &n in &c.dispatchers {
                let v = one(env, kind, owners, n, &c).await?;
                progress(&format!(
                    "sessions ({} owners) {} x{n}: {} orch/s, {} activities/s, mean {} ms",
                    owners.name(),
                    kind.name(),
                    v["orchestrations_per_s"],
                    v["activities_per_s"],
                    v["mean_orchestration_ms"],
                ));
                rows.push(v);
            }
            per.insert(kind.name().into(), Value::Array(rows));
        }
        let ratios = common::ratios_by_dispatchers(&per);
        out.insert(
            owners.name().into(),
            json!({ "providers": per, "ratios": ratios }),
        );
    }
    out.insert("in_flight".into(), json!(IN_FLIGHT));
    out.insert("sessions".into(), json!(SESSIONS));
    out.insert(
        "activities_per_orchestration".into(),
        json!(STEPS_PER_SESSION_ORCHESTRATION),
    );
    out.insert("dispatchers".into(), json!(c.dispatchers));
    Ok(Value::Object(out))
}
