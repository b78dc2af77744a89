//! The provider's claim counters in this test process, read through a debugging recorder
//! installed on first use. They are process-wide: tests that read them run one at a time
//! (hold [`SERIAL`]).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};

/// Held by a test for as long as it reads counts.
pub static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn snapshotter() -> &'static Snapshotter {
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder.install().unwrap();
        snapshotter
    })
}

/// Counter `name` for `queue` (and `outcome`, if given) so far. A snapshot takes and
/// zeroes every count since the last, so the totals are kept here.
fn total(name: &str, queue: &str, outcome: Option<&str>) -> u64 {
    /// Totals by (metric, queue, outcome).
    type Totals = HashMap<(String, String, String), u64>;
    static TOTALS: Mutex<Option<Totals>> = Mutex::new(None);
    let mut totals = TOTALS.lock().unwrap();
    let totals = totals.get_or_insert_with(HashMap::new);
    for (key, _, _, value) in snapshotter().snapshot().into_vec() {
        let DebugValue::Counter(n) = value else {
            continue;
        };
        let key = key.key();
        let label = |l: &str| {
            key.labels()
                .find(|x| x.key() == l)
                .map(|x| x.value().to_string())
                .unwrap_or_default()
        };
        // The counter's second label: a claim's outcome, or what woke a session owner.
        let detail = [label("outcome"), label("via")].concat();
        *totals
            .entry((key.name().to_string(), label("queue"), detail))
            .or_default() += n;
    }
    totals
        .iter()
        .filter(|((n, q, o), _)| {
            n == name && q == queue && outcome.is_none_or(|outcome| o == outcome)
        })
        .map(|(_, v)| v)
        .sum()
}

/// Claims of `queue` ("orchestrator" or "worker") that found nothing, so far.
pub fn empty_claims(queue: &str) -> u64 {
    total(steadfast_pg::metrics::CLAIMS, queue, Some("empty"))
}

/// Claims of `queue` run so far, whatever their outcome.
pub fn claims(queue: &str) -> u64 {
    total(steadfast_pg::metrics::CLAIMS, queue, None)
}

/// Fetches of `queue` that waited before their first claim, so far.
pub fn skipped_claims(queue: &str) -> u64 {
    total(steadfast_pg::metrics::CLAIMS_SKIPPED, queue, None)
}

/// Fetches of `queue` that are, or were, waiting: each ran an empty claim or skipped it.
pub fn idle_fetches(queue: &str) -> u64 {
    empty_claims(queue) + skipped_claims(queue)
}

/// Session owners' fetches woken by another fetch that found nothing, so far.
pub fn owner_wakes_by_lookup() -> u64 {
    total(
        steadfast_pg::metrics::SESSION_OWNER_WAKES,
        "",
        Some("lookup"),
    )
}

/// Session owners' fetches woken by the ack of a turn scheduling their session's
/// activities, so far.
pub fn owner_wakes_by_ack() -> u64 {
    total(steadfast_pg::metrics::SESSION_OWNER_WAKES, "", Some("ack"))
}
