//! The event-loop watch: a process whose JS event loop stops answering gives up its work.
//!
//! Leases are renewed by duroxide's tokio tasks, which keep running while the Node thread
//! is stuck (orchestration code in a busy loop, a synchronous call that hangs). Without
//! this, such a process would hold every instance and activity it had claimed for as long
//! as the stall lasts, and no other process could take them over. The JS runtime beats
//! ([`EventLoopWatch::beat`]) from a timer; once no beat has arrived for `stall_after`,
//! the runtime's provider wrapper (`ObservedProvider`) refuses renewals and fetches, so
//! the process's leases lapse and other processes redeliver the work, attempt counted.
//! An activity whose renewal was refused is cancelled by duroxide and then acked with no
//! result; that ack is refused too, or it would delete a work item whose lease had not
//! lapsed yet and the orchestration would wait for its activity for ever.
//! When the loop answers again, the next beat reports the stall (`eventLoopStalled`).

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use duroxide::providers::ProviderError;
use serde::Serialize;

/// The most refused work-item tokens remembered (each is forgotten at its ack).
const MAX_REFUSED_TOKENS: usize = 100_000;

/// What one stall came to, reported with the first beat after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StallReport {
    pub kind: &'static str,
    /// How long no beat arrived, in ms.
    pub stalled_ms: u64,
    /// The `eventLoopStallMs` in force.
    pub threshold_ms: u64,
    pub renewals_refused: u64,
    pub fetches_refused: u64,
    pub acks_refused: u64,
    pub reason: String,
    /// Wall-clock ms since the epoch.
    pub at: u64,
    pub source: &'static str,
}

pub(crate) struct EventLoopWatch {
    origin: Instant,
    stall_after: Option<Duration>,
    /// 1 + ms since `origin` of the last beat; 0 until the first beat (the watch is armed
    /// by the first beat after `start()` resolved, not by the time the provider took to
    /// connect).
    last_beat: AtomicU64,
    /// A stall was noticed (something was refused) and not reported yet.
    stalled: AtomicBool,
    renewals_refused: AtomicU64,
    fetches_refused: AtomicU64,
    acks_refused: AtomicU64,
    refused_tokens: Mutex<HashSet<String>>,
}

impl EventLoopWatch {
    /// `stall_after` of `None` turns the watch off.
    pub fn new(stall_after: Option<Duration>) -> Self {
        Self {
            origin: Instant::now(),
            stall_after,
            last_beat: AtomicU64::new(0),
            stalled: AtomicBool::new(false),
            renewals_refused: AtomicU64::new(0),
            fetches_refused: AtomicU64::new(0),
            acks_refused: AtomicU64::new(0),
            refused_tokens: Mutex::new(HashSet::new()),
        }
    }

    fn now(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64 + 1
    }

    /// The JS event loop answered. Returns the report of the stall it ends, if one was
    /// noticed.
    pub fn beat(&self) -> Option<StallReport> {
        let now = self.now();
        let last = self.last_beat.swap(now, Ordering::AcqRel);
        if last == 0 || !self.stalled.swap(false, Ordering::AcqRel) {
            return None;
        }
        let threshold_ms = self.stall_after.map(|d| d.as_millis() as u64).unwrap_or(0);
        let report = StallReport {
            kind: "eventLoopStalled",
            stalled_ms: now.saturating_sub(last),
            threshold_ms,
            renewals_refused: self.renewals_refused.swap(0, Ordering::AcqRel),
            fetches_refused: self.fetches_refused.swap(0, Ordering::AcqRel),
            acks_refused: self.acks_refused.swap(0, Ordering::AcqRel),
            reason: format!(
                "the event loop did not answer for {} ms (eventLoopStallMs {threshold_ms}): \
                 lease renewals and fetches were refused, so other processes could take the \
                 work over",
                now.saturating_sub(last)
            ),
            at: crate::diagnostics::now_ms(),
            source: "runtime",
        };
        tracing::warn!(
            target: "steadfast",
            event = "steadfast.event_loop_resumed",
            stalled_ms = report.stalled_ms,
            renewals_refused = report.renewals_refused,
            fetches_refused = report.fetches_refused,
            acks_refused = report.acks_refused,
            "the event loop answers again"
        );
        Some(report)
    }

    /// How long the loop has not answered, when that is past the threshold.
    fn stalled_for(&self) -> Option<u64> {
        let after = self.stall_after?.as_millis() as u64;
        let last = self.last_beat.load(Ordering::Acquire);
        if last == 0 {
            return None;
        }
        let silent = self.now().saturating_sub(last);
        if silent < after {
            return None;
        }
        if !self.stalled.swap(true, Ordering::AcqRel) {
            tracing::warn!(
                target: "steadfast",
                event = "steadfast.event_loop_stalled",
                silent_ms = silent,
                threshold_ms = after,
                "the event loop has not answered: refusing lease renewals and fetches until it does"
            );
        }
        Some(silent)
    }

    fn refusal(op: &str, silent: u64) -> ProviderError {
        ProviderError::retryable(
            op,
            format!("the Node.js event loop has not answered for {silent} ms (eventLoopStallMs)"),
        )
    }

    /// Whether a fetch must come back empty (counted).
    pub fn refuse_fetch(&self) -> bool {
        let refused = self.stalled_for().is_some();
        if refused {
            self.fetches_refused.fetch_add(1, Ordering::Relaxed);
        }
        refused
    }

    /// A renewal is let through, or refused while the loop is stalled. A refused work-item
    /// renewal's `token` is remembered for [`Self::check_ack`].
    pub fn check_renewal(&self, op: &str, token: Option<&str>) -> Result<(), ProviderError> {
        let Some(silent) = self.stalled_for() else {
            return Ok(());
        };
        self.renewals_refused.fetch_add(1, Ordering::Relaxed);
        if let Some(token) = token {
            let mut tokens = self
                .refused_tokens
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            if tokens.len() < MAX_REFUSED_TOKENS {
                tokens.insert(token.to_string());
            }
        }
        Err(Self::refusal(op, silent))
    }

    /// A work-item ack with no result after its renewal was refused here is duroxide
    /// dropping a cancelled activity: refused, so the lease lapses and the work is
    /// redelivered. An ack with a result commits as usual while its lease lives.
    pub fn check_ack(&self, token: &str, has_result: bool) -> Result<(), ProviderError> {
        let refused_before = {
            let mut tokens = self
                .refused_tokens
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            !tokens.is_empty() && tokens.remove(token)
        };
        if refused_before && !has_result {
            self.acks_refused.fetch_add(1, Ordering::Relaxed);
            self.stalled.store(true, Ordering::Release);
            return Err(ProviderError::permanent(
                "ack_work_item",
                "the activity was given up while the event loop was stalled: its work item \
                 is left for its lease to lapse and be redelivered",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_refused_while_the_loop_beats_or_when_off() {
        let off = EventLoopWatch::new(None);
        assert!(!off.refuse_fetch());
        assert!(off.check_renewal("renew", Some("t")).is_ok());
        let on = EventLoopWatch::new(Some(Duration::from_secs(60)));
        on.beat();
        assert!(!on.refuse_fetch());
        assert!(on.check_renewal("renew", Some("t")).is_ok());
        assert!(on.check_ack("t", false).is_ok());
        assert_eq!(on.beat(), None);
    }

    #[test]
    fn the_watch_is_armed_by_the_first_beat() {
        let w = EventLoopWatch::new(Some(Duration::ZERO));
        assert!(!w.refuse_fetch());
        assert!(w.check_renewal("renew", None).is_ok());
        assert_eq!(w.beat(), None);
        assert!(w.refuse_fetch());
    }

    #[test]
    fn a_stall_refuses_renewals_fetches_and_the_dropped_activitys_ack_then_is_reported() {
        let w = EventLoopWatch::new(Some(Duration::ZERO));
        w.beat();
        assert!(w.refuse_fetch());
        let e = w
            .check_renewal("renew_work_item_lock", Some("tok"))
            .unwrap_err();
        assert!(e.is_retryable(), "{e}");
        assert!(e.to_string().contains("eventLoopStallMs"), "{e}");
        assert!(w.check_ack("other", false).is_ok());
        assert!(w.check_ack("tok", false).is_err());
        assert!(
            w.check_ack("tok", false).is_ok(),
            "refused once, then forgotten"
        );
        let report = w.beat().expect("a report");
        assert_eq!(report.kind, "eventLoopStalled");
        assert_eq!(
            (
                report.renewals_refused,
                report.fetches_refused,
                report.acks_refused
            ),
            (1, 1, 1)
        );
        let json = serde_json::to_string(&report).unwrap();
        assert!(json.contains("\"stalledMs\""), "{json}");
    }

    #[test]
    fn an_ack_with_a_result_commits_even_after_a_refused_renewal() {
        let w = EventLoopWatch::new(Some(Duration::ZERO));
        w.beat();
        assert!(w.check_renewal("renew", Some("tok")).is_err());
        assert!(w.check_ack("tok", true).is_ok());
    }
}
