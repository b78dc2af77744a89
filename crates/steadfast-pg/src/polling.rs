//! Long polling shared by both queues: claim; if nothing was ready, wait for an enqueue
//! notification, the next known visibility time or the recheck interval (never past the
//! caller's `poll_timeout`), and claim again. In session-free mode only this process's
//! enqueues wake a fetch (there is no LISTEN); other processes' work is found by the recheck.
//! An enqueue notification wakes one waiting fetch of its queue; a woken fetch that
//! claims something and saw more work ready passes the wake on to the next, so a burst of
//! work fans out over idle dispatchers one by one instead of waking all of them for every
//! enqueue, and a single item wakes one fetch, not two. A woken worker fetch that finds
//! nothing wakes the fetches of session owners whose items are ready (`session_wakes.rs`).
//! A fetch that begins while the last
//! empty claim of its queue still holds waits before it claims (`queue_wake.rs`). While
//! claims fail with retryable errors, every fetch backs off together (`fetch_gate.rs`).

use std::future::Future;
use std::time::{Duration, Instant};

use crate::diagnostics::QueueKind;
use duroxide::providers::ProviderError;

use crate::handoff::{Handed, Offer};
use crate::provider::PostgresProvider;
use crate::queue_wake::{QueueWake, Seen};
use crate::session_wakes::OwnerWait;

/// A gated fetch with no poll timeout still waits this long, so that a dispatcher polling
/// in a loop does not spin while the gate is closed.
const GATED_MIN_WAIT: Duration = Duration::from_millis(10);

/// What a claim saw of its queue besides the item it took (only asked of a woken fetch's
/// claim).
pub(crate) struct Rest {
    /// Other work looked ready; a claim that cannot tell says true. It may count work this
    /// fetch could not take (another tag, a session owned elsewhere), never miss work it
    /// could: a missed item would wait for the recheck.
    pub(crate) more_ready: bool,
    /// The milliseconds until the queue's next delayed work becomes visible (inner None:
    /// nothing delayed), if the claim read them. A claim that reads them counts in
    /// `more_ready` the work of every filter: with `more_ready` false, the queue is then
    /// known to be empty for every fetch until that time or a wake-up (`queue_wake.rs`).
    pub(crate) next_visible_ms: Option<Option<f64>>,
}

pub(crate) enum ClaimOutcome<T> {
    /// Claimed, and what the claim saw besides.
    Claimed(T, Rest),
    /// Nothing eligible right now, with the milliseconds until the queue's next delayed
    /// work becomes visible, as the claim read it (None: nothing delayed, or not read
    /// because this provider does not long-poll).
    Empty(Option<f64>),
    /// Candidates existed but the bounded tries or time ran out: return at once.
    Exhausted,
}

impl PostgresProvider {
    /// `filters`: a hash of what, besides the queue's rows, decides what `claim` can
    /// take (tags, session owner, versions). `handoff`: while it waits, the fetch offers
    /// to take work handed to it (`handoff.rs`), which it returns as the second converts it.
    /// `owner`: a worker fetch's session owner, whose wake-up ends its waits too
    /// (`session_wakes.rs`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn poll<T, F, Fut>(
        &self,
        queue: QueueKind,
        poll_timeout: Duration,
        filters: u64,
        handoff: Option<HandoffWait<T>>,
        owner: Option<&OwnerWait>,
        mut claim: F,
    ) -> Result<Option<T>, ProviderError>
    where
        F: FnMut(Woken) -> Fut,
        Fut: Future<Output = Result<ClaimOutcome<T>, ProviderError>>,
    {
        let wake = self.enqueue_wake(queue);
        let deadline = Instant::now() + poll_timeout;
        let recheck = self.options.claim.long_poll_recheck;
        let mut woken = Woken::No;
        // A fetch that begins while its filters' last empty claim still holds waits first.
        let longest = deadline
            .saturating_duration_since(Instant::now())
            .min(recheck);
        let mut pending_wait = wake.known_idle(filters, longest);
        if pending_wait.is_some() {
            crate::metrics::claim_skipped(queue);
        }
        loop {
            if let Some(wait) = pending_wait.take() {
                match self
                    .wait_for_work(queue, &wake, owner, wait, deadline, handoff.as_ref())
                    .await
                {
                    Waited::Handed(item) => return Ok(Some(item)),
                    Waited::Woken(w) => woken = w,
                }
            }
            let pass = match self.fetch_gate.pass() {
                Ok(pass) => pass,
                Err(wait) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    tokio::time::sleep(wait.min(left.max(GATED_MIN_WAIT))).await;
                    return Ok(None);
                }
            };
            let wakes_before = wake.wakes_so_far();
            let started = Instant::now();
            let outcome = claim(woken).await;
            crate::metrics::claim_finished(queue, outcome_label(&outcome), started.elapsed());
            if let Ok(outcome) = &outcome {
                let seen = match outcome {
                    ClaimOutcome::Empty(ms) => Seen::NothingForFilters(ms.map(from_ms)),
                    ClaimOutcome::Claimed(
                        _,
                        Rest {
                            more_ready: false,
                            next_visible_ms: Some(ms),
                        },
                    ) => Seen::NothingForAny(ms.map(from_ms)),
                    _ => Seen::Work,
                };
                wake.claimed(wakes_before, filters, seen);
            }
            match &outcome {
                Ok(_) => self.fetch_gate.succeeded(pass),
                Err(e) if e.is_retryable() => self.fetch_gate.failed(pass, e),
                Err(_) => self.fetch_gate.released(pass),
            }
            let next_visible_ms = match outcome? {
                ClaimOutcome::Claimed(item, rest) => {
                    if woken.any() && rest.more_ready {
                        wake.wake_one();
                    }
                    return Ok(Some(item));
                }
                ClaimOutcome::Exhausted => return Ok(None),
                ClaimOutcome::Empty(ms) => ms,
            };
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let mut wait = (deadline - now).min(recheck);
            if let Some(ms) = next_visible_ms {
                wait = wait.min(from_ms(ms.max(0.0) + 1.0));
            }
            pending_wait = Some(wait);
        }
    }

    /// Wait for a wake-up or `wait`, and with an offer for work handed over meanwhile. A
    /// fetch whose offer an ack took waits for that ack's answer until its `deadline` at
    /// most: a hung ack must not hold the fetch past its poll timeout (the item it hands
    /// out later finds nobody and is given back).
    async fn wait_for_work<T>(
        &self,
        queue: QueueKind,
        wake: &QueueWake,
        owner: Option<&OwnerWait>,
        wait: Duration,
        deadline: Instant,
        handoff: Option<&HandoffWait<T>>,
    ) -> Waited<T> {
        let Some((offer, convert)) = handoff else {
            return Waited::Woken(woken_within(wake, owner, wait).await);
        };
        let mut waiting = self.handoffs.post(offer.clone());
        let woken = tokio::select! {
            handed = &mut waiting.receiver => {
                return match handed {
                    Ok(handed) => {
                        crate::metrics::handed_off(queue);
                        Waited::Handed(convert(handed))
                    }
                    // The ack that took the offer handed nothing: claim at once.
                    Err(_) => Waited::Woken(Woken::ByQueue),
                };
            }
            woken = woken_within(wake, owner, wait) => woken,
        };
        match waiting.withdraw(deadline.into()).await {
            Some(handed) => {
                crate::metrics::handed_off(queue);
                if woken.any() {
                    // The wake-up was meant for other work: pass it on.
                    wake.wake_one();
                }
                Waited::Handed(convert(handed))
            }
            None => Waited::Woken(woken),
        }
    }
}

/// Wait for a wake-up of the queue or of `owner`, or `wait`; which ended it.
async fn woken_within(wake: &QueueWake, owner: Option<&OwnerWait>, wait: Duration) -> Woken {
    let by_queue = |woken: bool| if woken { Woken::ByQueue } else { Woken::No };
    let Some(owner) = owner else {
        return by_queue(wake.wait(wait).await);
    };
    tokio::select! {
        woken = wake.wait(wait) => by_queue(woken),
        () = owner.woken() => Woken::ByOwner,
    }
}

/// What ended the wait before a claim.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Woken {
    /// No wait, or it ran out.
    No,
    /// A wake-up of the queue (or an ack took the fetch's offer and handed nothing).
    ByQueue,
    /// The fetch's session owner's wake-up (`session_wakes.rs`).
    ByOwner,
}

impl Woken {
    pub(crate) fn any(self) -> bool {
        self != Self::No
    }
}

/// What a waiting fetch offers to take (`handoff.rs`), and how it returns handed work.
pub(crate) type HandoffWait<T> = (Offer, fn(Handed) -> T);

/// How a wait ended: an item handed over, or time to claim.
enum Waited<T> {
    Handed(T),
    Woken(Woken),
}

/// A time in milliseconds as the claim statements return it (negative: already past).
fn from_ms(ms: f64) -> Duration {
    Duration::from_secs_f64(ms.max(0.0) / 1000.0)
}

fn outcome_label<T>(outcome: &Result<ClaimOutcome<T>, ProviderError>) -> &'static str {
    match outcome {
        Ok(ClaimOutcome::Claimed(..)) => "claimed",
        Ok(ClaimOutcome::Empty(_)) => "empty",
        Ok(ClaimOutcome::Exhausted) => "exhausted",
        Err(_) => "error",
    }
}
