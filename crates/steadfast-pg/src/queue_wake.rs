//! One queue's wake-ups in this process, and what its last claims showed.
//!
//! A claim that finds nothing, or a woken worker claim (what else it saw ready is left
//! to the wake-up it passes on), records, for its filters (each dispatcher's own: the
//! runtime gives every worker slot its own session owner), the queue's epoch when it
//! started and when the queue's next delayed work becomes visible. A fetch that begins
//! while its filters' record still holds (same epoch, that time not reached) would only
//! find nothing, so it waits first (tests/idle_fetch.rs): without this, every dispatcher
//! that finished an item on a queue with nothing else ready ran one empty claim before
//! it waited.
//!
//! Work that comes after the record's claim started wakes a fetch (`wake_one`): one
//! already waiting, or, stored as the one permit of [`Notify`], the next to wait, which
//! then claims at once. A woken claim that saw more ready (rows no other transaction was
//! writing) passes its wake-up on, so work that came while nobody waited is taken one
//! item after the other. A wake-up therefore does not end a record: the fetch that woke
//! for it claims (docs/benchmarks.md, run 21: with every wake-up ending every record, and
//! one record for all slots, each worker fetch ran one empty claim before its item).
//! What ends the records is what can leave work claimable that no wake-up brings to a
//! waiting fetch, counted by the queue's epoch: a wake-up that no waiting fetch was left
//! to take (a second such is lost in the one permit, and without this a backlog would be
//! taken one fetch after the other, each woken by the last: the stress workload at 16
//! dispatchers lost 8 %, run 23); a lost listen connection (`wake_all`, which stores no
//! permit); a turn's ack, which ends its instance's lease so that
//! messages that came during the turn become claimable ([`QueueWake::forget_empty`]); and
//! a woken claim that found nothing but work its filters exclude, whose wake-up was meant
//! for another fetch (another tag, a session owned by another slot). Work that becomes
//! claimable with no wake-up at all (a lease that expires, a session released by another
//! process, a turn acked by another process) is found at the wait's end, as a waiting
//! fetch finds it: the wait is bounded by `claim.long_poll_recheck`.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The `filters` of [`QueueWake::claimed`] and [`QueueWake::known_idle`] for a fetch's
/// parameters (stable within the process).
pub(crate) fn filters_key(parameters: &impl Hash) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    parameters.hash(&mut hasher);
    hasher.finish()
}

/// Records kept at most; past it they are all dropped (a dropped record costs one claim).
const MAX_RECORDS: usize = 1024;

#[derive(Default)]
pub(crate) struct QueueWake {
    notify: Notify,
    /// Fetches waiting now.
    waiting: AtomicUsize,
    /// Of those, about how many no wake-up was sent to yet (never more than `waiting`).
    unwoken: AtomicUsize,
    epoch: AtomicU64,
    /// By filters.
    last_empty: Mutex<HashMap<u64, EmptyClaim>>,
}

struct EmptyClaim {
    epoch: u64,
    /// When the queue's next delayed work becomes visible (None: nothing delayed).
    next_visible: Option<Instant>,
}

impl QueueWake {
    /// Wake one waiting fetch, or the next to wait. With no fetch waiting for it, the
    /// wake-up is kept for the next to wait, but a second one kept so is lost (one permit):
    /// the records end, so that fetches that begin claim at once and a backlog is taken
    /// by as many fetches as there are, not one after the other by passed-on wake-ups.
    pub(crate) fn wake_one(&self) {
        let waiting = self.waiting.load(Ordering::SeqCst);
        let taken = self
            .unwoken
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                n.min(waiting).checked_sub(1)
            })
            .is_ok();
        if !taken {
            self.epoch.fetch_add(1, Ordering::SeqCst);
        }
        self.notify.notify_one();
    }

    /// Wake every waiting fetch (wake-ups may have been lost).
    pub(crate) fn wake_all(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// A woken claim found nothing but work its filters exclude: the wake-up it took was
    /// meant for a fetch with other filters, so no fetch that begins from now on waits
    /// first.
    pub(crate) fn woken_for_nothing(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Something this process committed may have made work claimable without a wake-up
    /// (a turn's ack ends its instance's lease, and messages that came meanwhile become
    /// claimable): the next fetch claims at once. Waiting fetches are not woken.
    pub(crate) fn forget_empty(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Read right before a claim's statement starts; handed back to [`Self::claimed`].
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::SeqCst)
    }

    /// A claim that started at `epoch_before`, with `filters`, finished: `empty` (with the
    /// time until the next delayed work, if any) or not.
    pub(crate) fn claimed(&self, epoch_before: u64, filters: u64, empty: Option<Option<Duration>>) {
        let mut last = self.last_empty.lock().unwrap_or_else(|p| p.into_inner());
        match empty {
            Some(next_visible) => {
                if last.len() >= MAX_RECORDS && !last.contains_key(&filters) {
                    last.clear();
                }
                last.insert(
                    filters,
                    EmptyClaim {
                        epoch: epoch_before,
                        next_visible: next_visible.map(|d| Instant::now() + d),
                    },
                );
            }
            None => {
                last.remove(&filters);
            }
        }
    }

    /// How long a fetch with `filters` that begins now can wait before its first claim,
    /// at most `longest`: None when the last empty claim says nothing of it now.
    pub(crate) fn known_idle(&self, filters: u64, longest: Duration) -> Option<Duration> {
        let last = self.last_empty.lock().unwrap_or_else(|p| p.into_inner());
        let empty = last.get(&filters)?;
        if empty.epoch != self.epoch.load(Ordering::SeqCst) {
            return None;
        }
        let wait = match empty.next_visible {
            Some(at) => longest.min(at.saturating_duration_since(Instant::now())),
            None => longest,
        };
        (!wait.is_zero()).then_some(wait)
    }

    /// Wait for a wake-up or `wait`; whether a wake-up ended it.
    pub(crate) async fn wait(&self, wait: Duration) -> bool {
        // Counted before the wait can take a wake-up: a wake-up sent meanwhile counts this
        // fetch as woken and, finding no waiter yet, leaves the permit this wait takes.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        self.unwoken.fetch_add(1, Ordering::SeqCst);
        let woken = tokio::select! {
            _ = tokio::time::sleep(wait) => false,
            _ = self.notify.notified() => true,
        };
        if !woken {
            let _ = self
                .unwoken
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        }
        self.waiting.fetch_sub(1, Ordering::SeqCst);
        woken
    }
}
