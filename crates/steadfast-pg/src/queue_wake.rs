//! One queue's wake-ups in this process, and what its last empty claim showed.
//!
//! Every wake-up (an enqueue of this process, another process's notification, a lost
//! listen connection, a passed-on wake-up) is counted before it wakes a fetch. A claim
//! that finds nothing, or a woken worker claim that saw nothing else ready, records for
//! its filters the count it started with and when the queue's next delayed work becomes
//! visible. A fetch that begins while the record of its filters still holds (no wake-up
//! since, that time not reached) would only find nothing again, so it waits first:
//! without this, every dispatcher that finished an item on a queue with nothing else
//! ready ran one empty claim before it waited (tests/idle_fetch.rs). The throughput
//! benchmark, whose queues are seldom idle, shows no change (docs/benchmarks.md, runs 19
//! and 20).
//!
//! The count is read before the claim's statement starts and bumped after the write
//! that made work visible committed, so a record can only be newer than the work it
//! missed if that work's wake-up is still to come, and that wake-up ends the wait.
//! A turn's ack ends its instance's lease without a wake-up; it clears the record
//! ([`QueueWake::forget_empty`]), so the dispatcher's next fetch claims the messages that
//! came during the turn at once. Work that becomes claimable with no wake-up at all (a
//! lease that expires, a session released by another process, a turn acked by another
//! process) is found at the wait's end, as a waiting fetch finds it: the wait is bounded
//! by `claim.long_poll_recheck`.
//!
//! Records are kept per filters: duroxide gives each worker slot a session owner of its
//! own, so one record for the queue would rarely match the next fetch's filters. A wake-up
//! makes every record stale; stale ones are dropped whenever one is written, so the
//! records are at most the filters that found nothing since the last wake-up. A woken
//! claim that saw nothing else ready, whatever its tag or session, speaks for every
//! filter: it is kept as the queue's own record, which every fetch consults (after a
//! wake-up for one item, the other slots' next fetches would otherwise each claim once
//! for nothing).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The `filters` of [`QueueWake::claimed`] and [`QueueWake::known_idle`] for a fetch's
/// parameters (stable within the process).
pub(crate) fn filters_key(parameters: &impl Hash) -> u64 {
    let mut hasher = std::hash::DefaultHasher::new();
    parameters.hash(&mut hasher);
    hasher.finish()
}

#[derive(Default)]
pub(crate) struct QueueWake {
    notify: Notify,
    wakes: AtomicU64,
    last_empty: Mutex<EmptyClaims>,
}

#[derive(Default)]
struct EmptyClaims {
    /// The last claim that found nothing, by filters.
    by_filters: HashMap<u64, EmptyClaim>,
    /// The last claim that saw nothing ready for any filters.
    queue: Option<EmptyClaim>,
}

/// What a finished claim showed of its queue.
pub(crate) enum Seen {
    /// Work (or it cannot tell).
    Work,
    /// Nothing its filters take, and when the next delayed work becomes visible.
    NothingForFilters(Option<Duration>),
    /// Nothing ready for any filters besides what it took, and when the next delayed work
    /// becomes visible.
    NothingForAny(Option<Duration>),
}

struct EmptyClaim {
    wakes: u64,
    /// When the queue's next delayed work becomes visible (None: nothing delayed).
    next_visible: Option<Instant>,
}

impl QueueWake {
    /// Wake one waiting fetch, or the next to wait.
    pub(crate) fn wake_one(&self) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_one();
    }

    /// Wake every waiting fetch (wake-ups may have been lost).
    pub(crate) fn wake_all(&self) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Something this process committed may have made work claimable without a wake-up
    /// (a turn's ack ends its instance's lease, and messages that came meanwhile become
    /// claimable): the next fetch claims at once. Waiting fetches are not woken.
    pub(crate) fn forget_empty(&self) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
    }

    /// Read right before a claim's statement starts; handed back to [`Self::claimed`].
    pub(crate) fn wakes_so_far(&self) -> u64 {
        self.wakes.load(Ordering::SeqCst)
    }

    /// A claim that started at `wakes_before`, with `filters`, finished and saw `seen`.
    pub(crate) fn claimed(&self, wakes_before: u64, filters: u64, seen: Seen) {
        let mut last = self.last_empty.lock().unwrap_or_else(|p| p.into_inner());
        let record = |next_visible: Option<Duration>| EmptyClaim {
            wakes: wakes_before,
            next_visible: next_visible.map(|d| Instant::now() + d),
        };
        let now = self.wakes.load(Ordering::SeqCst);
        match seen {
            Seen::NothingForFilters(next_visible) => {
                last.by_filters.retain(|_, e| e.wakes == now);
                last.by_filters.insert(filters, record(next_visible));
            }
            Seen::NothingForAny(next_visible) => {
                last.by_filters.retain(|_, e| e.wakes == now);
                last.by_filters.remove(&filters);
                last.queue = Some(record(next_visible));
            }
            Seen::Work => {
                // Found work where a record may have said none (work that became claimable
                // with no wake-up): neither speaks for the queue now.
                last.by_filters.remove(&filters);
                last.queue = None;
            }
        }
    }

    /// How long a fetch with `filters` that begins now can wait before its first claim,
    /// at most `longest`: None when no empty claim says anything of it now.
    pub(crate) fn known_idle(&self, filters: u64, longest: Duration) -> Option<Duration> {
        let last = self.last_empty.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.wakes.load(Ordering::SeqCst);
        let empty = [last.by_filters.get(&filters), last.queue.as_ref()]
            .into_iter()
            .flatten()
            .find(|e| e.wakes == now)?;
        let wait = match empty.next_visible {
            Some(at) => longest.min(at.saturating_duration_since(Instant::now())),
            None => longest,
        };
        (!wait.is_zero()).then_some(wait)
    }

    /// Wait for a wake-up or `wait`; whether a wake-up ended it.
    pub(crate) async fn wait(&self, wait: Duration) -> bool {
        tokio::select! {
            _ = tokio::time::sleep(wait) => false,
            _ = self.notify.notified() => true,
        }
    }
}
