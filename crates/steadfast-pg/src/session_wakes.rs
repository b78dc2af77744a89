//! Worker fetches waiting, by the session owner they claim for, so that a fetch woken for
//! a session item it cannot take wakes the fetch that can.
//!
//! A session's items go only to its owner while the session is live, and duroxide gives
//! every worker slot an owner of its own unless the runtime has a stable
//! `worker_node_id`. An enqueue wakes one waiting worker fetch, the one that has waited
//! longest: for a session item, seldom its owner's. That fetch's claim finds nothing and
//! (rightly) passes no wake-up on, and the owner found the item only at its recheck. Now
//! a woken worker claim that finds nothing asks which owners' live sessions hold items
//! ready (`queries/worker_session_owners.sql`) and wakes the fetches of those owners that
//! wait in this process. Only once a provider of the process has claimed a session item:
//! until then nobody can own one here, and the question costs a statement.
//!
//! A fetch counts as waiting for its owner from its start to its end, its claims
//! included: a wake-up that comes while it claims is kept (a permit) and ends its next
//! wait at once. A fetch woken this way that finds nothing wakes nobody in turn: an
//! owner's wake-up goes one step from a queue's, never on, so two owners whose sessions
//! hold items neither can take (a tag outside their runtimes' filters) cannot wake each
//! other in a loop.
//!
//! A turn acked in this process that schedules a session's activity does better when it
//! knows the owner. Each claim of a session item here records its session's owner
//! ([`SessionOwnersSeen`]); when every activity the turn left unhanded is a session
//! activity whose owner is known, the ack wakes those owners' fetches under way here
//! instead of the worker fetch that waited longest, which would have claimed for nothing
//! and looked the owners up (4 empty claims and 18 look-ups per orchestration of 4 session
//! activities at 16 worker slots, docs/benchmarks.md run 63). An owner with no fetch under
//! way (its slot runs an activity between two fetches) claims at its next fetch's start,
//! as the queue is no longer known to be empty (`queue_wake.rs`). Other processes are
//! still told of the enqueue. What is recorded can be stale (the
//! session's lease ran out and another owner took it): an owner woken for a session that
//! finds nothing is forgotten as the owner of every session, so the next turns wake as
//! before until its fetches claim a session item again; meanwhile the item is found as
//! before, by the real owner's wake-up or recheck.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// The waiting worker fetches of one provider, by session owner.
#[derive(Default)]
pub(crate) struct WaitingOwners {
    by_owner: Mutex<HashMap<String, Owner>>,
}

struct Owner {
    notify: Arc<Notify>,
    fetches: usize,
}

impl WaitingOwners {
    /// A fetch for `owner` begins; it counts as waiting until the result is dropped.
    pub(crate) fn enter(self: &Arc<Self>, owner: &str) -> OwnerWait {
        let mut by_owner = self.by_owner.lock().unwrap_or_else(|p| p.into_inner());
        let entry = by_owner.entry(owner.to_owned()).or_insert_with(|| Owner {
            notify: Arc::default(),
            fetches: 0,
        });
        entry.fetches += 1;
        OwnerWait {
            owners: Arc::clone(self),
            owner: owner.to_owned(),
            notify: Arc::clone(&entry.notify),
        }
    }

    /// Wake one fetch of `owner`, if one is under way here; whether one was.
    pub(crate) fn wake(&self, owner: &str) -> bool {
        let by_owner = self.by_owner.lock().unwrap_or_else(|p| p.into_inner());
        by_owner
            .get(owner)
            .map(|found| found.notify.notify_one())
            .is_some()
    }
}

/// More sessions than this recorded at once, and the record starts over: it only saves
/// wake-ups, and a runtime owns at most `max_sessions_per_runtime` (10 by default).
const SEEN_SESSIONS_MAX: usize = 4096;

/// The owner of each session whose item a fetch of this process claimed last.
#[derive(Default)]
pub(crate) struct SessionOwnersSeen {
    by_session: Mutex<HashMap<String, String>>,
}

impl SessionOwnersSeen {
    pub(crate) fn claimed(&self, session: &str, owner: &str) {
        let mut by_session = self.by_session.lock().unwrap_or_else(|p| p.into_inner());
        if by_session.get(session).is_some_and(|known| known == owner) {
            return;
        }
        if by_session.len() >= SEEN_SESSIONS_MAX {
            by_session.clear();
        }
        by_session.insert(session.to_owned(), owner.to_owned());
    }

    pub(crate) fn owner_of(&self, session: &str) -> Option<String> {
        let by_session = self.by_session.lock().unwrap_or_else(|p| p.into_inner());
        by_session.get(session).cloned()
    }

    /// `owner` found nothing when woken for a session: owns none as far as we know.
    pub(crate) fn forget_owner(&self, owner: &str) {
        let mut by_session = self.by_session.lock().unwrap_or_else(|p| p.into_inner());
        by_session.retain(|_, known| known != owner);
    }
}

/// A worker fetch under way for its session owner.
pub(crate) struct OwnerWait {
    owners: Arc<WaitingOwners>,
    owner: String,
    notify: Arc<Notify>,
}

impl OwnerWait {
    /// Until a fetch woken for another's session item wakes this one.
    pub(crate) async fn woken(&self) {
        self.notify.notified().await;
    }
}

impl Drop for OwnerWait {
    fn drop(&mut self) {
        let mut by_owner = self
            .owners
            .by_owner
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = by_owner.get_mut(&self.owner) {
            entry.fetches -= 1;
            if entry.fetches == 0 {
                by_owner.remove(&self.owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_wake_while_the_fetch_claims_ends_its_next_wait() {
        let owners = Arc::new(WaitingOwners::default());
        let fetch = owners.enter("slot-0");
        assert!(owners.wake("slot-0"));
        tokio::time::timeout(Duration::from_secs(1), fetch.woken())
            .await
            .expect("the permit kept for it");
    }

    #[test]
    fn an_owner_is_forgotten_when_its_last_fetch_ends() {
        let owners = Arc::new(WaitingOwners::default());
        let first = owners.enter("slot-0");
        let second = owners.enter("slot-0");
        drop(first);
        assert_eq!(owners.by_owner.lock().unwrap().len(), 1);
        drop(second);
        assert!(owners.by_owner.lock().unwrap().is_empty());
        assert!(!owners.wake("slot-0"));
    }

    #[test]
    fn an_owner_forgotten_owns_none_of_its_sessions() {
        let seen = SessionOwnersSeen::default();
        seen.claimed("s1", "slot-0");
        seen.claimed("s2", "slot-0");
        seen.claimed("s3", "slot-1");
        seen.forget_owner("slot-0");
        assert_eq!(seen.owner_of("s1"), None);
        assert_eq!(seen.owner_of("s2"), None);
        assert_eq!(seen.owner_of("s3").as_deref(), Some("slot-1"));
        seen.claimed("s1", "slot-1");
        assert_eq!(seen.owner_of("s1").as_deref(), Some("slot-1"));
    }
}
