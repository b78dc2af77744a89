//! A session's items go only to its owner while the session is live, and duroxide gives
//! each worker slot an owner of its own: an enqueue's wake-up, which goes to the fetch
//! that waited longest, seldom reaches the owner's. That fetch finds nothing and wakes
//! the owner's fetch when it waits in this process (src/session_wakes.rs), whether the
//! item was enqueued here or by another process. An owner's fetch woken so wakes nobody
//! in turn. A turn acked here that schedules a session's activity wakes the owner this
//! process saw claim the session, and no other fetch; an owner so woken that finds
//! nothing is forgotten.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod common;

use std::time::Duration;

use common::claim_counts::{
    SERIAL, claims, empty_claims, owner_wakes_by_ack, owner_wakes_by_lookup,
};
use common::harness::{Harness, LONG, running_metadata, started_event};
use common::long_poll::{POLL, PROMPT, slow_recheck};
use duroxide::providers::{Provider, SessionFetchConfig, TagFilter, WorkItem};
use steadfast_pg::{PollingMode, PostgresProvider};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// A harness whose fetches recheck every 60 s, with the claim counters held for the test.
async fn counted_harness(
    label: &str,
    polling: PollingMode,
) -> (tokio::sync::MutexGuard<'static, ()>, Harness) {
    let serial = SERIAL.lock().await;
    let h = Harness::with_polling(&format!("{label}_{polling:?}"), polling, slow_recheck).await;
    (serial, h)
}

fn owner(name: &str) -> SessionFetchConfig {
    SessionFetchConfig {
        owner_id: name.into(),
        lock_timeout: LONG,
    }
}

/// Activity `id` of session `s1`.
fn session_item(id: u64) -> WorkItem {
    item_of("s1", id, None)
}

fn item_of(session: &str, id: u64, tag: Option<&str>) -> WorkItem {
    WorkItem::ActivityExecute {
        instance: "sessions".into(),
        execution_id: 1,
        id,
        name: "A".into(),
        input: "{}".into(),
        session_id: Some(session.into()),
        tag: tag.map(Into::into),
    }
}

/// `slot` takes session `session` (its first item claimed and acked).
async fn owns(p: &PostgresProvider, slot: &str, session: &str, id: u64) {
    p.enqueue_for_worker(item_of(session, id, None))
        .await
        .unwrap();
    let (_, token, _) = p
        .fetch_work_item(
            LONG,
            Duration::ZERO,
            Some(&owner(slot)),
            &TagFilter::default(),
        )
        .await
        .unwrap()
        .expect("the slot takes the session");
    p.ack_work_item(&token, None).await.unwrap();
}

/// Session `s1` owned by `slot-0` (its first item claimed and acked), then a fetch of
/// `slot-1` waiting, then one of `slot-0`; `enqueuer` enqueues the session's next item:
/// `slot-0`'s fetch gets it at once, not at its recheck (60 s here).
async fn the_owner_is_woken(h: &Harness, enqueuer: &PostgresProvider) {
    owns(&h.provider, "slot-0", "s1", 1).await;
    let [other, owning] = waiting_slots(h).await;

    let wakes_before = owner_wakes_by_lookup();
    let enqueued = Instant::now();
    enqueuer.enqueue_for_worker(session_item(2)).await.unwrap();
    let (item, _, _) = owning.await.unwrap().expect("the session's next item");
    assert_eq!(item, session_item(2));
    assert!(
        enqueued.elapsed() < PROMPT,
        "the owner's fetch was woken, not left to its recheck: {:?}",
        enqueued.elapsed()
    );
    assert!(!other.is_finished(), "the other slot's fetch waits on");
    assert_eq!(
        owner_wakes_by_lookup() - wakes_before,
        1,
        "woken by the other slot's fetch"
    );
    other.abort();
}

/// The item enqueued by this process.
async fn the_owner_is_woken_by_this_process(polling: PollingMode) {
    let (_serial, h) = counted_harness("session_wake", polling).await;
    the_owner_is_woken(&h, &h.provider).await;
    h.drop().await;
}

in_both_modes!(the_owner_is_woken_by_this_process);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_is_woken_for_an_item_another_process_enqueued() {
    let (_serial, h) = counted_harness("session_wake_remote", PollingMode::Listen).await;
    let mut o = common::other_process(&h.schema, PollingMode::Listen);
    slow_recheck(&mut o);
    let remote = common::provider_with(o).await;
    the_owner_is_woken(&h, &remote).await;
    remote.close().await;
    h.drop().await;
}

/// Two slots own a session each, and each session holds an item tagged `gpu`, which
/// neither slot's fetch takes. An enqueue wakes one fetch; it finds nothing and wakes the
/// other session's owner, which finds nothing too and must stop there: waking the first
/// again, the two would claim for nothing in a loop until their sessions ran out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owners_woken_for_items_they_cannot_take_do_not_wake_each_other() {
    let (_serial, h) = counted_harness("session_wake_loop", PollingMode::Listen).await;
    let p = &h.provider;
    owns(p, "slot-0", "s0", 1).await;
    owns(p, "slot-1", "s1", 2).await;
    p.enqueue_for_worker(item_of("s0", 3, Some("gpu")))
        .await
        .unwrap();
    let fetches = [
        h.waiting_worker_fetch(Some(owner("slot-0")), TagFilter::default(), POLL)
            .await,
        h.waiting_worker_fetch(Some(owner("slot-1")), TagFilter::default(), POLL)
            .await,
    ];
    let empty_before = empty_claims("worker");
    let wakes_before = owner_wakes_by_lookup();

    p.enqueue_for_worker(item_of("s1", 4, Some("gpu")))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let empty = empty_claims("worker") - empty_before;
    assert!(
        empty <= 2,
        "the woken fetch and the owner it woke claimed once each, then waited: {empty} \
         empty claims in 2 s"
    );
    assert_eq!(
        owner_wakes_by_lookup() - wakes_before,
        1,
        "one owner woken, by the fetch the enqueue woke"
    );
    assert!(fetches.iter().all(|f| !f.is_finished()));
    fetches.iter().for_each(|f| f.abort());
    h.drop().await;
}

/// A fetch of `slot-1` left waiting, then one of `slot-0`.
async fn waiting_slots(h: &Harness) -> [JoinHandle<Option<(WorkItem, String, u32)>>; 2] {
    let mut fetches = Vec::new();
    for slot in ["slot-1", "slot-0"] {
        fetches.push(
            h.waiting_worker_fetch(Some(owner(slot)), TagFilter::default(), POLL)
                .await,
        );
    }
    fetches.try_into().unwrap_or_else(|_| unreachable!())
}

/// A started instance `instance` claimed: its lock token, for a turn to ack.
async fn claimed_turn(h: &Harness, instance: &str) -> String {
    h.provider
        .enqueue_for_orchestrator(common::harness::start(instance), None)
        .await
        .unwrap();
    h.fetch_only(instance).await.1
}

/// Ack the turn of `token` (of `instance`, its first) scheduling `item`.
async fn ack_scheduling(h: &Harness, instance: &str, token: &str, item: WorkItem) {
    h.provider
        .ack_orchestration_item(
            token,
            1,
            vec![started_event(instance)],
            vec![item],
            vec![],
            running_metadata(),
            vec![],
        )
        .await
        .unwrap();
}

/// `slot-0` owns `s1` (seen claiming it here); a fetch of `slot-1` waits first, then one
/// of `slot-0`; a turn schedules `s1`'s next activity: `slot-0` gets it, and `slot-1`'s
/// fetch never claims (before, it was woken, claimed for nothing and looked `slot-0` up).
async fn a_turn_wakes_the_owner_it_saw(polling: PollingMode) {
    let (_serial, h) = counted_harness("session_ack", polling).await;
    let p = &h.provider;
    owns(p, "slot-0", "s1", 1).await;
    let token = claimed_turn(&h, "sessions").await;
    let [other, owning] = waiting_slots(&h).await;
    let claims_before = claims("worker");
    let (by_ack, by_lookup) = (owner_wakes_by_ack(), owner_wakes_by_lookup());

    let acked = Instant::now();
    ack_scheduling(&h, "sessions", &token, session_item(2)).await;
    let (item, _, _) = owning.await.unwrap().expect("the session's next item");
    assert_eq!(item, session_item(2));
    assert!(acked.elapsed() < PROMPT, "took {:?}", acked.elapsed());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!other.is_finished(), "the other slot's fetch waits on");
    assert_eq!(
        claims("worker") - claims_before,
        1,
        "the owner's claim only: the other slot's fetch was not woken"
    );
    assert_eq!(owner_wakes_by_ack() - by_ack, 1);
    assert_eq!(owner_wakes_by_lookup() - by_lookup, 0);
    other.abort();
    h.drop().await;
}

in_both_modes!(a_turn_wakes_the_owner_it_saw);

/// `slot-0` owns `s1` and has no fetch under way (a slot runs its activity between two
/// fetches) when a turn schedules `s1`'s next activity: no other fetch is woken, and
/// `slot-0`'s next fetch claims the item at once, although its last claim found nothing
/// (which would make it wait first, its queue known to be idle).
async fn a_turn_wakes_the_owner_s_next_fetch(polling: PollingMode) {
    let (_serial, h) = counted_harness("session_ack_next", polling).await;
    let p = &h.provider;
    owns(p, "slot-0", "s1", 1).await;
    let slot_0 = owner("slot-0");
    let found = p
        .fetch_work_item(LONG, Duration::ZERO, Some(&slot_0), &TagFilter::default())
        .await
        .unwrap();
    assert!(found.is_none(), "slot-0's last claim finds nothing");
    let token = claimed_turn(&h, "sessions").await;
    let other = h
        .waiting_worker_fetch(Some(owner("slot-1")), TagFilter::default(), POLL)
        .await;
    let claims_before = claims("worker");

    ack_scheduling(&h, "sessions", &token, session_item(2)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let fetched = Instant::now();
    let (item, _, _) = p
        .fetch_work_item(LONG, POLL, Some(&slot_0), &TagFilter::default())
        .await
        .unwrap()
        .expect("the session's next item");
    assert_eq!(item, session_item(2));
    assert!(fetched.elapsed() < PROMPT, "took {:?}", fetched.elapsed());
    assert_eq!(
        claims("worker") - claims_before,
        1,
        "slot-0's claim only: the other slot's fetch was not woken"
    );
    assert!(!other.is_finished(), "the other slot's fetch waits on");
    other.abort();
    h.drop().await;
}

in_both_modes!(a_turn_wakes_the_owner_s_next_fetch);

/// What this process saw can be stale: `s1`'s session moved to an owner elsewhere
/// (`slot-9`, its row rewritten as a takeover would). The first turn still wakes `slot-0`,
/// which finds nothing and is forgotten; the next turn wakes a fetch as before and makes
/// no owner wake-up by ack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_woken_for_nothing_is_forgotten() {
    let (_serial, h) = counted_harness("session_ack_stale", PollingMode::Listen).await;
    let p = &h.provider;
    owns(p, "slot-0", "s1", 1).await;
    h.exec(
        "UPDATE S.sessions SET worker_id = 'slot-9' WHERE session_id = 's1'",
        None,
    )
    .await;
    let first = claimed_turn(&h, "first").await;
    let second = claimed_turn(&h, "second").await;
    let fetch = h
        .waiting_worker_fetch(Some(owner("slot-0")), TagFilter::default(), POLL)
        .await;
    let by_ack = owner_wakes_by_ack();
    let empty_before = empty_claims("worker");

    ack_scheduling(&h, "first", &first, item_of("s1", 2, None)).await;
    let until = Instant::now() + PROMPT;
    while empty_claims("worker") == empty_before {
        assert!(Instant::now() < until, "slot-0 was not woken");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(owner_wakes_by_ack() - by_ack, 1, "slot-0 woken by the ack");
    ack_scheduling(&h, "second", &second, item_of("s1", 3, None)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        owner_wakes_by_ack() - by_ack,
        1,
        "slot-0, forgotten as s1's owner, not woken by the second ack"
    );
    assert!(!fetch.is_finished(), "s1's items are slot-9's");
    fetch.abort();
    h.drop().await;
}

/// The worst stale record: `slot-0` is recorded as `s1`'s owner but has no fetch any more
/// (its runtime stopped) and `s1`'s session lease ran out. A turn schedules `s1`'s
/// activity: it wakes no fetch here (its owner is known), and the only fetch left, `slot-1`'s,
/// must still take the item, at its recheck (1 s here), taking the session over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_routed_to_an_owner_gone_is_taken_at_the_recheck() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("session_ack_gone", |o| {
        o.claim.long_poll_recheck = Duration::from_secs(1)
    })
    .await;
    let p = &h.provider;
    owns(p, "slot-0", "s1", 1).await;
    h.exec(
        "UPDATE S.sessions SET locked_until = clock_timestamp() - interval '1 second' \
         WHERE session_id = 's1'",
        None,
    )
    .await;
    let token = claimed_turn(&h, "sessions").await;
    let taker = h
        .waiting_worker_fetch(Some(owner("slot-1")), TagFilter::default(), POLL)
        .await;

    let acked = Instant::now();
    ack_scheduling(&h, "sessions", &token, session_item(2)).await;
    let (item, _, _) = taker.await.unwrap().expect("the item, not lost");
    assert_eq!(item, session_item(2));
    assert!(
        acked.elapsed() < PROMPT,
        "taken at the recheck, not at the poll's end: {:?}",
        acked.elapsed()
    );
    h.drop().await;
}
