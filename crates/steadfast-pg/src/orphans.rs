//! Messages to instances that nothing started. They are stored as waiting, outside the
//! claim's ready index (the baseline migration), so they never cost a claim; they wait
//! `ClaimOptions::orphan_timeout` for a start and are then moved to the dead-letter table
//! with reason `orphaned`, one `MessagesOrphaned` diagnostic per instance. Never dropped.
//! The same sweep makes ready a waiting message whose instance became runnable after its
//! enqueue read otherwise (`functions/sweep_orphans.sql`).
//!
//! The sweep runs from the orchestrator claim (every round of a fetch, long-polling ones
//! included, which recheck at least every `long_poll_recheck`), on a tracked task, at most
//! once per [`OrphanSweep::interval`] per provider: it runs wherever a runtime dispatches
//! and needs no task of its own.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sqlx::Row;

use crate::diagnostics::{Diagnostic, DiagnosticKind, QueueKind};
use crate::provider::PostgresProvider;
use crate::run::run_standalone;

const OP: &str = "sweep_orphaned_messages";

/// Waiting messages one statement acts on at most (made ready or dead-lettered).
const BATCH: i32 = 1000;
/// Statements per sweep, so that one sweep of a flood stays short.
const MAX_BATCHES: usize = 20;

/// When the last sweep of this provider began (ms after the provider was created).
pub(crate) struct OrphanSweep {
    epoch: Instant,
    last_ms: AtomicU64,
}

impl OrphanSweep {
    pub(crate) fn new() -> Self {
        Self {
            epoch: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    /// A quarter of the timeout, between 100 ms and 30 s: a message is dead-lettered at
    /// most this long after its timeout ran out (while some dispatcher fetches).
    pub(crate) fn interval(timeout: Duration) -> Duration {
        (timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(30))
    }

    /// Whether a sweep is due now (one interval after the provider started, then after
    /// each sweep began); if so, it is recorded as begun.
    fn due(&self, interval: Duration) -> bool {
        let now = self.epoch.elapsed().as_millis() as u64;
        let last = self.last_ms.load(Ordering::Relaxed);
        let interval = interval.as_millis() as u64;
        now.saturating_sub(last) >= interval
            && self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

impl PostgresProvider {
    /// Start a sweep on a tracked task if one is due (called by every orchestrator fetch).
    pub(crate) fn sweep_orphans_if_due(&self) {
        let timeout = self.options.claim.orphan_timeout;
        if !self.orphan_sweep.due(OrphanSweep::interval(timeout)) {
            return;
        }
        let pool = self.pool.clone();
        let sql = self.q.orch_orphans_sweep.clone();
        let session_free = self.session_free();
        let diagnostics = self.diagnostics.clone();
        let timeout_ms = timeout.as_secs_f64() * 1000.0;
        let error = format!(
            "no orchestration with this instance id was started within {} ms of this message becoming visible",
            timeout.as_millis()
        );
        self.in_flight.spawn(async move {
            for _ in 0..MAX_BATCHES {
                let batch = async {
                    let query = sqlx::query(&sql)
                        .persistent(!session_free)
                        .bind(timeout_ms)
                        .bind(BATCH)
                        .bind(&error);
                    run_standalone!(&pool, session_free, OP, |e| query.fetch_all(e))
                };
                let rows: Result<Vec<sqlx::postgres::PgRow>, duroxide::providers::ProviderError> =
                    batch.await;
                let rows = match rows {
                    Ok(rows) => rows,
                    Err(e) => {
                        // Nothing moved; the next sweep tries again.
                        tracing::warn!(target: "steadfast_pg", error = %e, "orphan sweep failed");
                        return;
                    }
                };
                for row in &rows {
                    let instance: String = row.get("instance_id");
                    let count: i32 = row.get("messages");
                    let kinds: Option<String> = row.get("kinds");
                    let mut d = Diagnostic::new(
                        DiagnosticKind::MessagesOrphaned,
                        QueueKind::Orchestrator,
                        format!(
                            "{count} message(s) waited {} ms for a start of this instance; moved to the dead-letter table with reason 'orphaned'",
                            timeout_ms as u64
                        ),
                    )
                    .instance(&instance);
                    if let Some(kinds) = kinds {
                        d = d.message_kind(kinds);
                    }
                    diagnostics.emit(d);
                }
                // All of a full batch moved: older orphans may be left; go on.
                let moved: i64 = rows.iter().map(|r| i64::from(r.get::<i32, _>("messages"))).sum();
                if moved < i64::from(BATCH) {
                    return;
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_is_a_quarter_of_the_timeout_within_bounds() {
        assert_eq!(
            OrphanSweep::interval(Duration::from_secs(300)),
            Duration::from_secs(30)
        );
        assert_eq!(
            OrphanSweep::interval(Duration::from_secs(2)),
            Duration::from_millis(500)
        );
        assert_eq!(
            OrphanSweep::interval(Duration::from_millis(1)),
            Duration::from_millis(100)
        );
    }

    #[test]
    fn a_sweep_is_due_once_per_interval() {
        let s = OrphanSweep::new();
        let every = Duration::from_millis(200);
        assert!(!s.due(every), "not right after start");
        std::thread::sleep(Duration::from_millis(220));
        assert!(s.due(every));
        assert!(!s.due(every));
        std::thread::sleep(Duration::from_millis(220));
        assert!(s.due(every));
        assert!(!s.due(every));
    }
}
