//! Activities handed from the turn that schedules them straight to worker fetches of this
//! process that are waiting for work.
//!
//! A worker fetch that waits (long polling, nothing was claimable) posts an [`Offer`]:
//! which tags it takes and the lease a claim of it would stamp. A turn's ack takes one
//! posted offer for each activity it schedules that the offer accepts, before its
//! statement runs ([`Handoffs::reserve`]); the statement stores those items already
//! claimed for them (functions/enqueue_work_items.sql): one row write where an enqueue and
//! a claim make two, and no claim statement or wake-up. Once the ack has committed, each
//! reserved fetch receives its item and token ([`Reservation::hand`]) and returns it as a
//! claim would, first attempt counted.
//!
//! What can go wrong, and where it goes:
//! - The ack is refused or fails: its reservations are dropped, and each reserved fetch
//!   claims at once, as if woken.
//! - The fetch was cancelled before it received its item, or its poll timeout passed while
//!   its ack still ran (a fetch never waits for a hung ack past its poll timeout): the
//!   item is given back like any claim nobody received (`give_back.rs`), and found by the
//!   next claim.
//! - The ack committed but its answer was lost: the handed items are leased to nobody
//!   until their lease runs out, then redelivered with that attempt counted, as a claim
//!   whose answer was lost.
//!
//! Session items are never handed out (their session must be claimed too). A handed item may be taken ahead of an
//! older one that became claimable in the same instant without a wake-up of this process
//! (another process's enqueue not yet announced, a lease that just ran out): the queue is
//! FIFO among the items a claim sees, and a waiting fetch saw none.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use duroxide::providers::{ScheduledActivityIdentifier, WorkItem};
use tokio::sync::oneshot;

use crate::give_back::{ClaimGuard, GiveBack};
use crate::run::PgQuery;

/// What a waiting worker fetch takes, and the lease its claim would stamp.
#[derive(Clone, Debug)]
pub(crate) struct Offer {
    /// 0 untagged only, 1 listed tags, 2 untagged or listed, 3 any (as the claim's).
    pub(crate) tag_mode: i32,
    pub(crate) tags: Vec<String>,
    pub(crate) lock_ms: f64,
    pub(crate) jitter: f32,
}

impl Offer {
    fn accepts(&self, item: &WorkItem) -> bool {
        let WorkItem::ActivityExecute {
            session_id: None,
            tag,
            ..
        } = item
        else {
            return false;
        };
        let listed = || tag.as_ref().is_some_and(|t| self.tags.contains(t));
        match self.tag_mode {
            0 => tag.is_none(),
            1 => listed(),
            2 => tag.is_none() || listed(),
            _ => true,
        }
    }
}

fn is_cancelled(item: &WorkItem, cancelled: &[ScheduledActivityIdentifier]) -> bool {
    let WorkItem::ActivityExecute {
        instance,
        execution_id,
        id,
        ..
    } = item
    else {
        return false;
    };
    cancelled
        .iter()
        .any(|c| c.instance == *instance && c.execution_id == *execution_id && c.activity_id == *id)
}

/// An item handed to a fetch, with its lock token; the guard gives it back unless the
/// fetch disarms it.
pub(crate) struct Handed {
    pub(crate) item: WorkItem,
    pub(crate) token: String,
    pub(crate) guard: ClaimGuard,
}

struct Posted {
    id: u64,
    offer: Offer,
    sender: oneshot::Sender<Handed>,
}

/// The offers of this process's waiting worker fetches, oldest first.
#[derive(Default)]
pub(crate) struct Handoffs {
    posted: Mutex<Vec<Posted>>,
    next_id: AtomicU64,
}

/// A fetch's posted offer while it waits. Dropped, it is withdrawn.
pub(crate) struct Waiting<'a> {
    handoffs: &'a Handoffs,
    id: u64,
    pub(crate) receiver: oneshot::Receiver<Handed>,
}

/// One posted offer taken by an ack for one of its items.
pub(crate) struct Reservation {
    sender: oneshot::Sender<Handed>,
    pub(crate) token_prefix: String,
    pub(crate) lock_ms: f64,
    pub(crate) jitter: f32,
}

impl Handoffs {
    pub(crate) fn post(&self, offer: Offer) -> Waiting<'_> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (sender, receiver) = oneshot::channel();
        self.lock().push(Posted { id, offer, sender });
        Waiting {
            handoffs: self,
            id,
            receiver,
        }
    }

    /// For each item, the oldest posted offer that accepts it, taken (None: left to the
    /// claims). An item the same turn cancels is stored and deleted by one ack, never
    /// handed out.
    pub(crate) fn reserve(
        &self,
        items: &[WorkItem],
        cancelled: &[ScheduledActivityIdentifier],
    ) -> Vec<Option<Reservation>> {
        let mut posted = self.lock();
        items
            .iter()
            .map(|item| {
                if is_cancelled(item, cancelled) {
                    return None;
                }
                let at = posted.iter().position(|p| p.offer.accepts(item))?;
                let taken = posted.remove(at);
                Some(Reservation {
                    sender: taken.sender,
                    token_prefix: crate::token::new_worker_token_prefix(),
                    lock_ms: taken.offer.lock_ms,
                    jitter: taken.offer.jitter,
                })
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Posted>> {
        self.posted.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the offer is still posted (and now withdrawn); false once an ack took it.
    fn withdraw(&self, id: u64) -> bool {
        let mut posted = self.lock();
        match posted.iter().position(|p| p.id == id) {
            Some(at) => {
                posted.remove(at);
                true
            }
            None => false,
        }
    }
}

impl Waiting<'_> {
    /// Stop waiting: None if the offer was still posted; if an ack had taken it, what that
    /// ack hands over by `until` (None if it handed nothing, or not in time: what it hands
    /// out later is given back, see [`Reservation::hand`]).
    pub(crate) async fn withdraw(mut self, until: tokio::time::Instant) -> Option<Handed> {
        if self.handoffs.withdraw(self.id) {
            return None;
        }
        tokio::time::timeout_at(until, &mut self.receiver)
            .await
            .ok()?
            .ok()
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.handoffs.withdraw(self.id);
    }
}

impl Reservation {
    /// Hand the committed item to its fetch; if that fetch is gone, the guard, dropped
    /// here, gives the item back.
    pub(crate) fn hand(self, item: WorkItem, token: String, guard: ClaimGuard) {
        let _ = self.sender.send(Handed { item, token, guard });
    }
}

/// An ack's reservations as the parameters `ack_turn_handing_off` takes after the turn:
/// per worker item a token prefix, lease ms and jitter (NULL: not handed out).
pub(crate) struct HandoffColumns {
    prefixes: Option<Vec<Option<String>>>,
    lock_ms: Option<Vec<Option<f64>>>,
    jitters: Option<Vec<Option<f32>>>,
}

impl HandoffColumns {
    pub(crate) fn of(reserved: &[Option<Reservation>]) -> Self {
        if reserved.iter().all(Option::is_none) {
            return Self {
                prefixes: None,
                lock_ms: None,
                jitters: None,
            };
        }
        Self {
            prefixes: Some(
                reserved
                    .iter()
                    .map(|r| r.as_ref().map(|r| r.token_prefix.clone()))
                    .collect(),
            ),
            lock_ms: Some(
                reserved
                    .iter()
                    .map(|r| r.as_ref().map(|r| r.lock_ms))
                    .collect(),
            ),
            jitters: Some(
                reserved
                    .iter()
                    .map(|r| r.as_ref().map(|r| r.jitter))
                    .collect(),
            ),
        }
    }

    pub(crate) fn bind<'q>(&'q self, q: PgQuery<'q>) -> PgQuery<'q> {
        q.bind(&self.prefixes)
            .bind(&self.lock_ms)
            .bind(&self.jitters)
    }
}

/// After the ack committed: hand each reserved item to its fetch, with the token the
/// statement gave it. Returns how many were handed out. A reservation without a token
/// (none is expected) is dropped, and its fetch claims.
pub(crate) fn hand_over(
    reserved: Vec<Option<Reservation>>,
    items: &[WorkItem],
    tokens: Option<Vec<Option<String>>>,
    give_back: &GiveBack,
) -> usize {
    let tokens = tokens.unwrap_or_default();
    let mut handed = 0;
    for ((reservation, item), token) in reserved.into_iter().zip(items).zip(tokens) {
        if let (Some(reservation), Some(token)) = (reservation, token) {
            let guard = give_back.arm(token.clone());
            reservation.hand(item.clone(), token, guard);
            handed += 1;
        }
    }
    handed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(session: Option<&str>, tag: Option<&str>) -> WorkItem {
        WorkItem::ActivityExecute {
            instance: "i".into(),
            execution_id: 1,
            id: 1,
            name: "a".into(),
            input: String::new(),
            session_id: session.map(Into::into),
            tag: tag.map(Into::into),
        }
    }

    fn offer(tag_mode: i32, tags: &[&str]) -> Offer {
        Offer {
            tag_mode,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            lock_ms: 1000.0,
            jitter: 0.0,
        }
    }

    #[test]
    fn offers_take_what_their_claim_would() {
        let untagged = activity(None, None);
        let gpu = activity(None, Some("gpu"));
        assert!(offer(0, &[]).accepts(&untagged));
        assert!(!offer(0, &[]).accepts(&gpu));
        assert!(offer(1, &["gpu"]).accepts(&gpu));
        assert!(!offer(1, &["gpu"]).accepts(&untagged));
        assert!(offer(2, &["gpu"]).accepts(&untagged) && offer(2, &["gpu"]).accepts(&gpu));
        assert!(!offer(2, &["cpu"]).accepts(&gpu));
        assert!(offer(3, &[]).accepts(&gpu));
        assert!(!offer(3, &[]).accepts(&activity(Some("s"), None)));
    }

    #[test]
    fn each_offer_is_reserved_once_oldest_first() {
        let handoffs = Handoffs::default();
        let gpu_only = handoffs.post(offer(1, &["gpu"]));
        let any = handoffs.post(offer(3, &[]));
        let items = [
            activity(None, None),
            activity(None, Some("gpu")),
            activity(None, None),
        ];
        let reserved = handoffs.reserve(&items, &[]);
        assert!(reserved[0].is_some() && reserved[1].is_some() && reserved[2].is_none());
        assert!(handoffs.lock().is_empty());
        drop((gpu_only, any));
    }

    #[test]
    fn an_activity_its_turn_cancels_is_not_handed_out() {
        let handoffs = Handoffs::default();
        let _waiting = handoffs.post(offer(3, &[]));
        let cancelled = ScheduledActivityIdentifier {
            instance: "i".into(),
            execution_id: 1,
            activity_id: 1,
        };
        let reserved = handoffs.reserve(&[activity(None, None)], &[cancelled]);
        assert!(reserved[0].is_none());
        assert_eq!(handoffs.lock().len(), 1, "the offer stays posted");
    }

    #[tokio::test]
    async fn a_withdrawn_offer_still_receives_what_its_reserving_ack_hands_over() {
        let handoffs = Handoffs::default();
        let waiting = handoffs.post(offer(3, &[]));
        let reservation = handoffs.reserve(&[activity(None, None)], &[]).remove(0);
        assert!(reservation.is_some());
        drop(reservation);
        // The ack dropped its reservation (refused): the fetch gets nothing and claims.
        assert!(
            waiting
                .withdraw(tokio::time::Instant::now())
                .await
                .is_none()
        );

        let waiting = handoffs.post(offer(3, &[]));
        drop(waiting);
        assert!(
            handoffs.lock().is_empty(),
            "a dropped wait withdraws its offer"
        );
    }
}
