//! A fetch that begins while its queue is known to be empty waits before it claims
//! (src/queue_wake.rs): known from the last claim of this process with the same filters,
//! which found nothing, with no wake-up since. It claims at once after a wake-up, for
//! other filters, and when delayed work becomes visible.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::claim_counts::{SERIAL, claims, skipped_claims};
use common::harness::{Harness, LONG, raised, start};
use common::long_poll::{POLL, PROMPT, RECHECK, slow_recheck};
use common::queues::Queue;
use duroxide::providers::{Provider, SessionFetchConfig, TagFilter, WorkItem};
use tokio::time::Instant;

/// A fetch that ends empty: its claim, its wait and its last claim.
const SHORT_POLL: Duration = Duration::from_millis(200);

/// `what`, begun at `started`, ended well before the recheck or the poll timeout.
fn assert_prompt(started: Instant, what: &str) {
    assert!(
        started.elapsed() < PROMPT,
        "{what} took {:?} (the recheck is {RECHECK:?})",
        started.elapsed()
    );
}

async fn waits_first_then_one_claim_takes_the_item(queue: Queue) {
    let _serial = SERIAL.lock().await;
    let h = Harness::new(&format!("idle_{}", queue.label()), slow_recheck).await;
    assert!(
        !queue.fetch(&h.provider, SHORT_POLL).await,
        "the queue starts empty"
    );
    let (claims_before, skipped_before) = (claims(queue.label()), skipped_claims(queue.label()));

    let provider = h.provider.clone();
    let fetch = tokio::spawn(async move { queue.fetch(&provider, POLL).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        skipped_claims(queue.label()) - skipped_before,
        1,
        "{queue:?}: the fetch waited before claiming"
    );
    assert_eq!(
        claims(queue.label()) - claims_before,
        0,
        "{queue:?}: claims run by a fetch on a queue known empty, before any wake-up"
    );

    queue.enqueue(&h.provider, queue.item("idle", 1)).await;
    assert!(fetch.await.unwrap(), "{queue:?}: the wake-up ends the wait");
    assert_eq!(
        claims(queue.label()) - claims_before,
        1,
        "{queue:?}: claims to take one item"
    );
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_fetch_on_a_queue_known_empty_waits_before_it_claims() {
    waits_first_then_one_claim_takes_the_item(Queue::Worker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orchestrator_fetch_on_a_queue_known_empty_waits_before_it_claims() {
    waits_first_then_one_claim_takes_the_item(Queue::Orchestrator).await;
}

/// An enqueue that no fetch was waiting for still makes the next fetch claim at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wake_up_since_the_empty_claim_makes_the_next_fetch_claim() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("idle_woken", slow_recheck).await;
    let queue = Queue::Worker;
    assert!(!queue.fetch(&h.provider, SHORT_POLL).await);
    queue.enqueue(&h.provider, queue.item("idle", 1)).await;
    let skipped_before = skipped_claims(queue.label());
    let started = Instant::now();
    assert!(queue.fetch(&h.provider, POLL).await, "the enqueued item");
    assert_eq!(skipped_claims(queue.label()), skipped_before);
    assert_prompt(started, "the fetch after a wake-up");
    h.drop().await;
}

/// A worker whose tags found nothing says nothing of another tag's work: a fetch for
/// that tag claims at once, though no wake-up came since (the enqueue's was taken by the
/// first fetch's wait).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_claim_says_nothing_of_other_filters() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("idle_filters", slow_recheck).await;
    let tagged = WorkItem::ActivityExecute {
        instance: "idle".into(),
        execution_id: 1,
        id: 1,
        name: "A".into(),
        input: "{}".into(),
        session_id: None,
        tag: Some("gpu".into()),
    };
    h.provider.enqueue_for_worker(tagged).await.unwrap();
    let untagged = TagFilter::default();
    let got = h
        .provider
        .fetch_work_item(LONG, SHORT_POLL, None, &untagged)
        .await
        .unwrap();
    assert!(
        got.is_none(),
        "an untagged worker does not take the gpu item"
    );

    let started = Instant::now();
    let got = h
        .provider
        .fetch_work_item(LONG, POLL, None, &TagFilter::tags(["gpu"]))
        .await
        .unwrap();
    assert!(got.is_some(), "the gpu worker takes it");
    assert_prompt(started, "the gpu worker's fetch");
    h.drop().await;
}

/// Each filter's empty claim is remembered on its own: duroxide gives every worker slot a
/// session owner of its own, and a record kept for the last filters only would make every
/// other slot's next fetch claim once for nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_claims_are_remembered_per_filters() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("idle_owners", slow_recheck).await;
    let owners: Vec<SessionFetchConfig> = ["slot-0", "slot-1"]
        .map(|owner| SessionFetchConfig {
            owner_id: owner.into(),
            lock_timeout: LONG,
        })
        .into();
    for owner in &owners {
        let got = h
            .provider
            .fetch_work_item(LONG, SHORT_POLL, Some(owner), &TagFilter::default())
            .await
            .unwrap();
        assert!(got.is_none(), "the queue is empty");
    }
    let (claims_before, skipped_before) = (claims("worker"), skipped_claims("worker"));
    for owner in &owners {
        let got = h
            .provider
            .fetch_work_item(LONG, SHORT_POLL, Some(owner), &TagFilter::default())
            .await
            .unwrap();
        assert!(got.is_none());
    }
    assert_eq!(
        skipped_claims("worker") - skipped_before,
        2,
        "both slots' fetches waited first"
    );
    assert_eq!(
        claims("worker") - claims_before,
        2,
        "claims run: each fetch's one at the end of its wait, none before it"
    );
    h.drop().await;
}

/// A woken claim that took the only ready item, and saw nothing else ready whatever its
/// tag or session, leaves the queue known empty for every filter: another slot's next
/// fetch waits first instead of claiming once for nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_woken_claim_that_saw_nothing_else_ready_speaks_for_every_filter() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("idle_any_filter", slow_recheck).await;
    let [first, second] = ["slot-0", "slot-1"].map(|owner| SessionFetchConfig {
        owner_id: owner.into(),
        lock_timeout: LONG,
    });
    let woken = h
        .waiting_worker_fetch(Some(first), TagFilter::default(), POLL)
        .await;
    let queue = Queue::Worker;
    queue.enqueue(&h.provider, queue.item("only", 1)).await;
    assert!(woken.await.unwrap().is_some(), "the woken fetch takes it");

    let (claims_before, skipped_before) = (claims("worker"), skipped_claims("worker"));
    let got = h
        .provider
        .fetch_work_item(LONG, SHORT_POLL, Some(&second), &TagFilter::default())
        .await
        .unwrap();
    assert!(got.is_none());
    assert_eq!(
        skipped_claims("worker") - skipped_before,
        1,
        "the other slot's fetch waited first"
    );
    assert_eq!(
        claims("worker") - claims_before,
        1,
        "claims run: the one at the end of its wait"
    );
    h.drop().await;
}

/// Delayed work ends the wait when it becomes visible, not the recheck.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delayed_work_ends_the_wait_when_it_becomes_visible() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("idle_delayed", slow_recheck).await;
    let delay = Duration::from_secs(1);
    h.provider
        .enqueue_for_orchestrator(start("later"), Some(delay))
        .await
        .unwrap();
    let queue = Queue::Orchestrator;
    // Takes the enqueue's wake-up and finds nothing visible yet.
    assert!(!queue.fetch(&h.provider, SHORT_POLL).await);
    let skipped_before = skipped_claims(queue.label());
    let started = Instant::now();
    assert!(queue.fetch(&h.provider, POLL).await, "the delayed start");
    assert_eq!(skipped_claims(queue.label()) - skipped_before, 1);
    assert_prompt(started, "the fetch of the delayed start");
    h.drop().await;
}

/// A message that came during a turn waits for the turn's ack, which wakes nobody: the
/// next fetch claims it at once, though the last claim found the instance leased.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_came_during_a_turn_is_claimed_at_once_after_its_ack() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("idle_turn", slow_recheck).await;
    h.provider
        .enqueue_for_orchestrator(start("busy"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("busy").await;
    h.provider
        .enqueue_for_orchestrator(raised("busy", "during"), None)
        .await
        .unwrap();
    let queue = Queue::Orchestrator;
    assert!(
        !queue.fetch(&h.provider, SHORT_POLL).await,
        "the instance is leased"
    );
    h.ack_started("busy", &token).await;
    let started = Instant::now();
    assert!(queue.fetch(&h.provider, POLL).await, "the event's turn");
    assert_prompt(started, "the fetch after the ack");
    h.drop().await;
}

/// A woken worker claim that saw nothing else ready leaves the queue known empty, until
/// the next delayed item's time: the next fetch waits first, then claims that item then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_claim_that_saw_nothing_else_ready_the_next_fetch_waits() {
    let _serial = SERIAL.lock().await;
    let h = Harness::new("idle_after_claim", slow_recheck).await;
    let queue = Queue::Worker;
    queue.enqueue(&h.provider, queue.item("later", 1)).await;
    let (_, token, _) = h
        .provider
        .fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::default())
        .await
        .unwrap()
        .expect("the first item");
    let delay = Duration::from_secs(2);
    h.provider
        .abandon_work_item(&token, Some(delay), true)
        .await
        .unwrap();
    let delayed_from = Instant::now();

    let provider = h.provider.clone();
    let woken = tokio::spawn(async move { queue.fetch(&provider, POLL).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    queue.enqueue(&h.provider, queue.item("now", 2)).await;
    assert!(
        woken.await.unwrap(),
        "the waiting fetch takes the second item"
    );

    let (claims_before, skipped_before) = (claims(queue.label()), skipped_claims(queue.label()));
    assert!(
        queue.fetch(&h.provider, POLL).await,
        "the next fetch takes the delayed item"
    );
    assert_eq!(skipped_claims(queue.label()) - skipped_before, 1);
    assert_eq!(
        claims(queue.label()) - claims_before,
        1,
        "one claim, when the delayed item became visible"
    );
    assert!(
        delayed_from.elapsed() < delay + Duration::from_secs(3),
        "took {:?} after a {delay:?} delay (the recheck is {RECHECK:?})",
        delayed_from.elapsed()
    );
    h.drop().await;
}

/// A lease that runs out wakes nobody: an activity whose worker hung is still handed out
/// again within the recheck by a fetch that began on a queue known empty, not after the
/// poll timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lease_is_found_at_the_recheck_by_a_waiting_fetch() {
    let _serial = SERIAL.lock().await;
    let recheck = Duration::from_millis(300);
    let h = Harness::new("idle_hung", |o| {
        o.claim.long_poll_recheck = recheck;
        o.claim.redelivery_backoff.base = Duration::ZERO;
        o.claim.redelivery_backoff.jitter = 0.0;
    })
    .await;
    let queue = Queue::Worker;
    queue.enqueue(&h.provider, queue.item("hung", 1)).await;
    let lease = Duration::from_secs(1);
    let hung = h
        .provider
        .fetch_work_item(lease, Duration::ZERO, None, &TagFilter::default())
        .await
        .unwrap();
    assert!(hung.is_some(), "the hung worker's claim");
    let leased_at = Instant::now();
    assert!(!queue.fetch(&h.provider, SHORT_POLL).await, "leased");

    let skipped_before = skipped_claims(queue.label());
    assert!(queue.fetch(&h.provider, POLL).await, "handed out again");
    assert!(
        skipped_claims(queue.label()) > skipped_before,
        "the fetch began on a queue known empty"
    );
    let took = leased_at.elapsed();
    assert!(
        took < lease + recheck + Duration::from_secs(2),
        "handed out again {took:?} after a {lease:?} lease (recheck {recheck:?}, poll {POLL:?})"
    );
    h.drop().await;
}
