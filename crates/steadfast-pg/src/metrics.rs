//! The provider's metrics, through the `metrics` facade: free when the application installs
//! no recorder. [`METRICS`] is the one list of their names, kinds, labels and meanings;
//! [`describe`] hands it to the installed recorder, and `docs/metrics.md` is checked
//! against it by a test. Counters and the claim histogram are recorded where the events
//! happen; the queue gauges are read from the database only when asked
//! ([`PostgresProvider::refresh_metric_gauges`]), e.g. once per scrape.

use std::time::Duration;

use duroxide::providers::ProviderError;
use sqlx::Row;

use crate::error::db_error;
use crate::run::RunQuery;

use crate::diagnostics::QueueKind;
use crate::provider::PostgresProvider;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    Counter,
    Gauge,
    Histogram,
}

impl MetricKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Counter => "counter",
            Self::Gauge => "gauge",
            Self::Histogram => "histogram",
        }
    }
}

/// One metric the provider records.
#[derive(Clone, Copy, Debug)]
pub struct MetricDescription {
    pub name: &'static str,
    pub kind: MetricKind,
    pub labels: &'static [&'static str],
    pub help: &'static str,
}

pub const CLAIMS: &str = "steadfast_claims_total";
pub const CLAIMS_SKIPPED: &str = "steadfast_claims_skipped_total";
pub const HANDOFFS: &str = "steadfast_handoffs_total";
pub const SESSION_OWNER_WAKES: &str = "steadfast_session_owner_wakes_total";
pub const CLAIM_DURATION: &str = "steadfast_claim_duration_seconds";
pub const REDELIVERIES: &str = "steadfast_redeliveries_total";
pub const LEASE_DEADLINES: &str = "steadfast_lease_deadlines_total";
pub const DIAGNOSTICS: &str = "steadfast_diagnostics_total";
pub const QUEUE_MESSAGES: &str = "steadfast_queue_messages";
pub const QUEUE_OLDEST_READY_AGE: &str = "steadfast_queue_oldest_ready_age_seconds";
pub const DEAD_LETTERS: &str = "steadfast_dead_letters";

pub const METRICS: &[MetricDescription] = &[
    MetricDescription {
        name: CLAIMS,
        kind: MetricKind::Counter,
        labels: &["queue", "outcome"],
        help: "Claim statements run by fetches, by outcome: claimed, empty (nothing eligible), exhausted (tries or time ran out) or error.",
    },
    MetricDescription {
        name: CLAIMS_SKIPPED,
        kind: MetricKind::Counter,
        labels: &["queue"],
        help: "Fetches that waited before their first claim: the last claim of this process with the same filters found the queue empty, and no wake-up came since.",
    },
    MetricDescription {
        name: HANDOFFS,
        kind: MetricKind::Counter,
        labels: &["queue"],
        help: "Work handed by an ack straight to a waiting fetch of the same process, with no claim statement: activities a turn scheduled (queue=worker).",
    },
    MetricDescription {
        name: SESSION_OWNER_WAKES,
        kind: MetricKind::Counter,
        labels: &["via"],
        help: "Session owners' worker fetches under way in the process woken for their sessions' items: via lookup, by another fetch of the process that found nothing while the owners' live sessions held items ready; via ack, by the ack of a turn that scheduled their session's activity.",
    },
    MetricDescription {
        name: CLAIM_DURATION,
        kind: MetricKind::Histogram,
        labels: &["queue"],
        help: "Time of one claim statement (waits between claims excluded), in seconds.",
    },
    MetricDescription {
        name: REDELIVERIES,
        kind: MetricKind::Counter,
        labels: &["queue"],
        help: "Claims that handed out work delivered before (its lease ran out or it was abandoned).",
    },
    MetricDescription {
        name: LEASE_DEADLINES,
        kind: MetricKind::Counter,
        labels: &["work"],
        help: "Turns (work=turn) or activities (work=activity) that reached max_turn_duration or max_activity_duration: their lease was no longer renewed.",
    },
    MetricDescription {
        name: DIAGNOSTICS,
        kind: MetricKind::Counter,
        labels: &["event", "queue"],
        help: "Diagnostics raised, by event name (steadfast.poison_committed, steadfast.ack_rejected, ...), the same as the diagnostic events.",
    },
    MetricDescription {
        name: QUEUE_MESSAGES,
        kind: MetricKind::Gauge,
        labels: &["queue", "state"],
        help: "Messages in the queue by state (ready, delayed, leased), read from the database at the last scrape.",
    },
    MetricDescription {
        name: QUEUE_OLDEST_READY_AGE,
        kind: MetricKind::Gauge,
        labels: &["queue"],
        help: "How long the oldest ready, unleased message has been visible, in seconds (0 when none is ready), at the last scrape.",
    },
    MetricDescription {
        name: DEAD_LETTERS,
        kind: MetricKind::Gauge,
        labels: &["queue"],
        help: "Dead letters kept in the schema, at the last scrape.",
    },
];

/// Give the installed recorder the help text of every metric in [`METRICS`].
pub fn describe() {
    for m in METRICS {
        match m.kind {
            MetricKind::Counter => metrics::describe_counter!(m.name, m.help),
            MetricKind::Gauge => metrics::describe_gauge!(m.name, m.help),
            MetricKind::Histogram => metrics::describe_histogram!(m.name, m.help),
        }
    }
}

pub(crate) fn claim_skipped(queue: QueueKind) {
    metrics::counter!(CLAIMS_SKIPPED, "queue" => queue.as_str()).increment(1);
}

pub(crate) fn handed_off(queue: QueueKind) {
    metrics::counter!(HANDOFFS, "queue" => queue.as_str()).increment(1);
}

pub(crate) fn session_owner_woken(via: crate::wake::OwnerWakeVia) {
    metrics::counter!(SESSION_OWNER_WAKES, "via" => via.as_str()).increment(1);
}

pub(crate) fn claim_finished(queue: QueueKind, outcome: &'static str, took: Duration) {
    let queue = queue.as_str();
    metrics::counter!(CLAIMS, "queue" => queue, "outcome" => outcome).increment(1);
    metrics::histogram!(CLAIM_DURATION, "queue" => queue).record(took.as_secs_f64());
}

pub(crate) fn redelivered(queue: QueueKind, attempt_count: u32) {
    if attempt_count > 1 {
        metrics::counter!(REDELIVERIES, "queue" => queue.as_str()).increment(1);
    }
}

pub(crate) fn lease_deadline_reached(work: &'static str) {
    metrics::counter!(LEASE_DEADLINES, "work" => work).increment(1);
}

pub(crate) fn diagnostic_raised(event: &'static str, queue: QueueKind) {
    metrics::counter!(DIAGNOSTICS, "event" => event, "queue" => queue.as_str()).increment(1);
}

/// Queue gauges read less than this long ago are not read again.
pub const GAUGES_MIN_AGE: Duration = Duration::from_secs(1);

/// When the queue gauges were last read; its lock lets one read run at a time.
#[derive(Default)]
pub(crate) struct GaugeRefresh(tokio::sync::Mutex<Option<std::time::Instant>>);

impl PostgresProvider {
    /// Read the queue gauges ([`QUEUE_MESSAGES`], [`QUEUE_OLDEST_READY_AGE`],
    /// [`DEAD_LETTERS`]) from the database and set them. The same two statements as
    /// `steadfast doctor`'s queue and dead-letter sections; they count every queued message
    /// and dead letter. So one read runs at a time (concurrent callers wait for it and
    /// share it), and gauges read less than [`GAUGES_MIN_AGE`] ago are left as they are:
    /// scrapes, however many and however often, cost the database at most two statements
    /// a second.
    pub async fn refresh_metric_gauges(&self) -> Result<(), ProviderError> {
        let mut last = self.gauge_refresh.0.lock().await;
        if last.is_some_and(|at| at.elapsed() < GAUGES_MIN_AGE) {
            return Ok(());
        }
        self.read_metric_gauges().await?;
        *last = Some(std::time::Instant::now());
        Ok(())
    }

    async fn read_metric_gauges(&self) -> Result<(), ProviderError> {
        const OP: &str = "refresh_metric_gauges";
        let get = |e| db_error(OP, e);
        let queues = self
            .query(&self.admin_q.doctor_queues)
            .fetch_all_on(self, OP)
            .await?;
        for row in &queues {
            let queue: String = row.try_get("queue").map_err(get)?;
            for state in ["ready", "delayed", "leased"] {
                let n: f64 = row.try_get(state).map_err(get)?;
                metrics::gauge!(QUEUE_MESSAGES, "queue" => queue.clone(), "state" => state).set(n);
            }
            let oldest: Option<serde_json::Value> = row.try_get("oldest").map_err(get)?;
            let age = oldest
                .as_ref()
                .and_then(|o| o.get("age_s"))
                .and_then(serde_json::Value::as_f64)
                .unwrap_or(0.0);
            metrics::gauge!(QUEUE_OLDEST_READY_AGE, "queue" => queue).set(age.max(0.0));
        }
        let dead = self
            .query(&self.admin_q.doctor_dead_letters)
            .fetch_one_on(self, OP)
            .await?;
        let by_queue: Option<serde_json::Value> = dead.try_get("by_queue").map_err(get)?;
        let count_of = |queue: &str| {
            by_queue
                .as_ref()
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .find(|e| e.get("queue").and_then(serde_json::Value::as_str) == Some(queue))
                .and_then(|e| e.get("count").and_then(serde_json::Value::as_f64))
                .unwrap_or(0.0)
        };
        for queue in [QueueKind::Orchestrator, QueueKind::Worker] {
            let queue = queue.as_str();
            metrics::gauge!(DEAD_LETTERS, "queue" => queue).set(count_of(queue));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/metrics.md's rows for the provider: (name, type, labels).
    fn documented() -> Vec<(String, String, Vec<String>)> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/metrics.md");
        let docs = std::fs::read_to_string(path).expect("docs/metrics.md");
        docs.lines()
            .filter(|l| l.starts_with("| `steadfast_"))
            .map(|l| {
                let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
                let labels = cells[2]
                    .split(',')
                    .map(|s| s.trim().trim_matches('`').to_string())
                    .filter(|s| !s.is_empty())
                    .collect();
                (
                    cells[0].trim_matches('`').to_string(),
                    cells[1].to_string(),
                    labels,
                )
            })
            .collect()
    }

    #[test]
    fn the_docs_table_lists_every_metric_with_its_type_and_labels() {
        let expected: Vec<(String, String, Vec<String>)> = METRICS
            .iter()
            .map(|m| {
                let labels = m.labels.iter().map(|l| l.to_string()).collect();
                (m.name.to_string(), m.kind.as_str().to_string(), labels)
            })
            .collect();
        assert_eq!(documented(), expected);
    }

    #[test]
    fn names_follow_prometheus_conventions() {
        for m in METRICS {
            assert!(m.name.starts_with("steadfast_"), "{}", m.name);
            assert_eq!(
                m.kind == MetricKind::Counter,
                m.name.ends_with("_total"),
                "{}",
                m.name
            );
            assert!(!m.help.is_empty(), "{}", m.name);
        }
    }
}
