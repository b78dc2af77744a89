//! A session's items go only to its owner while the session is live, and duroxide gives
//! each worker slot an owner of its own: an enqueue's wake-up, which goes to the fetch
//! that waited longest, seldom reaches the owner's. That fetch finds nothing and wakes
//! the owner's fetch when it waits in this process (src/session_wakes.rs), whether the
//! item was enqueued here or by another process. An owner's fetch woken so wakes nobody
//! in turn.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod common;

use std::time::Duration;

use common::claim_counts::{SERIAL, empty_claims, session_owner_wakes};
use common::harness::{Harness, LONG};
use common::long_poll::{POLL, PROMPT, slow_recheck};
use duroxide::providers::{Provider, SessionFetchConfig, TagFilter, WorkItem};
use steadfast_pg::{PollingMode, PostgresProvider};
use tokio::time::Instant;

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
    let p = &h.provider;
    p.enqueue_for_worker(session_item(1)).await.unwrap();
    let (_, token, _) = p
        .fetch_work_item(
            LONG,
            Duration::ZERO,
            Some(&owner("slot-0")),
            &TagFilter::default(),
        )
        .await
        .unwrap()
        .expect("slot-0 takes the session");
    p.ack_work_item(&token, None).await.unwrap();
    let other = h
        .waiting_worker_fetch(Some(owner("slot-1")), TagFilter::default(), POLL)
        .await;
    let owning = h
        .waiting_worker_fetch(Some(owner("slot-0")), TagFilter::default(), POLL)
        .await;

    let wakes_before = session_owner_wakes();
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
        session_owner_wakes() - wakes_before,
        1,
        "woken by the other slot's fetch"
    );
    other.abort();
}

/// The item enqueued by this process.
async fn the_owner_is_woken_by_this_process(polling: PollingMode) {
    let _serial = SERIAL.lock().await;
    let h =
        Harness::with_polling(&format!("session_wake_{polling:?}"), polling, slow_recheck).await;
    the_owner_is_woken(&h, &h.provider).await;
    h.drop().await;
}

in_both_modes!(the_owner_is_woken_by_this_process);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_is_woken_for_an_item_another_process_enqueued() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("session_wake_remote", slow_recheck).await;
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
    let _serial = SERIAL.lock().await;
    let h = Harness::new("session_wake_loop", slow_recheck).await;
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
    let wakes_before = session_owner_wakes();

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
        session_owner_wakes() - wakes_before,
        1,
        "one owner woken, by the fetch the enqueue woke"
    );
    assert!(fetches.iter().all(|f| !f.is_finished()));
    fetches.iter().for_each(|f| f.abort());
    h.drop().await;
}
