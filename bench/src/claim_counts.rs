//! steadfast's claim counters in this process (`steadfast_claims_total` by queue and
//! outcome, `steadfast_claims_skipped_total` and `steadfast_handoffs_total` by queue,
//! `steadfast_session_owner_wakes_total`), read through a debugging recorder
//! installed at start: how many claim statements a run's fetches made, and of what kind.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use serde_json::{Value, json};

use crate::common::round2;

static SNAPSHOTTER: OnceLock<Option<Snapshotter>> = OnceLock::new();
/// A snapshot takes and zeroes the counts since the last, so the totals are kept here.
static TOTALS: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

/// Installs the recorder (once; false if another recorder was installed first).
pub fn install() -> bool {
    SNAPSHOTTER
        .get_or_init(|| {
            let recorder = DebuggingRecorder::new();
            let snapshotter = recorder.snapshotter();
            recorder.install().ok().map(|()| snapshotter)
        })
        .is_some()
}

/// Totals so far, keyed `<queue>.<outcome>` (`<queue>.skipped` for the skipped claims,
/// `<queue>.handed` for the handoffs, `worker.owner_wakes_<via>` for the session owners
/// woken, via lookup or ack).
pub fn totals() -> BTreeMap<String, u64> {
    let mut totals = TOTALS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(Some(snapshotter)) = SNAPSHOTTER.get() {
        for (key, _, _, value) in snapshotter.snapshot().into_vec() {
            let DebugValue::Counter(n) = value else {
                continue;
            };
            let key = key.key();
            let label = |l: &str| {
                key.labels()
                    .find(|x| x.key() == l)
                    .map(|x| x.value().to_string())
            };
            let queue = || label("queue").unwrap_or_default();
            let (queue, name) = match key.name() {
                steadfast_pg::metrics::CLAIMS => (queue(), label("outcome").unwrap_or_default()),
                steadfast_pg::metrics::CLAIMS_SKIPPED => (queue(), "skipped".into()),
                steadfast_pg::metrics::HANDOFFS => (queue(), "handed".into()),
                steadfast_pg::metrics::SESSION_OWNER_WAKES => (
                    "worker".into(),
                    format!("owner_wakes_{}", label("via").unwrap_or_default()),
                ),
                _ => continue,
            };
            *totals.entry(format!("{queue}.{name}")).or_default() += n;
        }
    }
    totals.clone()
}

/// The counts between two readings of [`totals`], per completed orchestration.
pub fn per_orchestration(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
    completed: u64,
) -> Value {
    let mut v = serde_json::Map::new();
    for (key, n) in after {
        let d = n - before.get(key).copied().unwrap_or(0);
        v.insert(
            key.clone(),
            json!(round2(d as f64 / completed.max(1) as f64)),
        );
    }
    Value::Object(v)
}
