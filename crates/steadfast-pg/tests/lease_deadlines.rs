//! Turns and activities that never end (issue 9, item 4): the runtime renews a lease from
//! its own task however long the work runs, also while orchestration code is stuck in a
//! loop or has blocked its thread or event loop. With `claim.max_turn_duration` and
//! `claim.max_activity_duration` the renewal statement never extends a lease past that
//! much after its claim: the lease lapses, the work is redelivered with the attempt
//! counted, and the attempt ceiling ends work that always hangs. Before, renewals
//! succeeded for ever and the stuck item held its instance (or work item) for good.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::harness::{Harness, raised};
use duroxide::providers::{Provider, TagFilter, WorkItem};

const LEASE: Duration = Duration::from_millis(400);
const DEADLINE: Duration = Duration::from_millis(1200);

/// Renew every 100 ms, as the runtime does, until refused: the refusal must name `option`
/// and come at the deadline, neither before nor a lease later.
async fn renew_until_refused<F, Fut>(option: &str, mut renew: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), duroxide::providers::ProviderError>>,
{
    let claimed = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Err(e) = renew().await {
            let (held, why) = (claimed.elapsed(), e.to_string());
            assert!(why.contains(option), "{why}");
            assert!(
                held >= DEADLINE - Duration::from_millis(150),
                "refused after {held:?}"
            );
            assert!(
                held < DEADLINE + LEASE,
                "renewed past the deadline: {held:?}"
            );
            return;
        }
        assert!(
            claimed.elapsed() < Duration::from_secs(10),
            "renewed for ever"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_never_ends_loses_its_lease_at_the_deadline_and_ends_poisoned() {
    let h = Harness::new("deadline_turn", |o| {
        o.claim.max_turn_duration = Some(DEADLINE);
        o.claim.max_attempts = Some(1);
        o.claim.redelivery_backoff.base = Duration::from_millis(1);
    })
    .await;
    let p = &h.provider;
    h.create_instance("stuck").await;
    p.enqueue_for_orchestrator(raised("stuck", "go"), None)
        .await
        .unwrap();
    for attempt in 1..=2 {
        let (item, token, got) = p
            .fetch_orchestration_item(LEASE, Duration::ZERO, None)
            .await
            .unwrap()
            .expect("redelivered once the hung turn's lease lapsed");
        assert_eq!((item.instance.as_str(), got), ("stuck", attempt));
        renew_until_refused("max_turn_duration", || {
            p.renew_orchestration_item_lock(&token, LEASE)
        })
        .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The third claim is the ceiling's: the hung instance ends poisoned, nothing handed out.
    tokio::time::sleep(LEASE).await;
    assert!(
        p.fetch_orchestration_item(LEASE, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none()
    );
    let admin = p.as_management_capability().unwrap();
    assert_eq!(
        admin.get_instance_info("stuck").await.unwrap().status,
        "Failed"
    );
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activity_that_never_ends_loses_its_lease_at_the_deadline() {
    let h = Harness::new("deadline_activity", |o| {
        o.claim.max_activity_duration = Some(DEADLINE);
        o.claim.redelivery_backoff.base = Duration::from_millis(1);
    })
    .await;
    let p = &h.provider;
    hanging_activity(&h).await;
    let any = TagFilter::default();
    let fetch = || p.fetch_work_item(LEASE, Duration::ZERO, None, &any);
    let (_, token, attempt) = fetch().await.unwrap().unwrap();
    assert_eq!(attempt, 1);
    renew_until_refused("max_activity_duration", || {
        p.renew_work_item_lock(&token, LEASE)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, _, attempt) = fetch().await.unwrap().expect("redelivered, counted");
    assert_eq!(attempt, 2);
    h.drop().await;
}

/// A started instance `o` with one activity to run.
async fn hanging_activity(h: &Harness) {
    h.create_instance("o").await;
    h.provider
        .enqueue_for_worker(WorkItem::ActivityExecute {
            instance: "o".into(),
            execution_id: 1,
            id: 2,
            name: "Hangs".into(),
            input: "{}".into(),
            session_id: None,
            tag: None,
        })
        .await
        .unwrap();
}

/// A claim's first lease is cut at the deadline too: with a deadline shorter than the lock
/// timeout, the renewal refused at the deadline finds the lease over. duroxide answers that
/// refusal by acking the work item with no result; while the claim's lease still ran, that
/// ack deleted the item, and its orchestration waited for the activity for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_shorter_than_the_lock_timeout_cuts_the_first_lease() {
    let deadline = Duration::from_millis(300);
    let h = Harness::new("deadline_first_lease", |o| {
        o.claim.max_activity_duration = Some(deadline);
        o.claim.redelivery_backoff.base = Duration::from_millis(1);
    })
    .await;
    let p = &h.provider;
    hanging_activity(&h).await;
    let any = TagFilter::default();
    let lock_timeout = Duration::from_secs(5);
    let fetch = || p.fetch_work_item(lock_timeout, Duration::ZERO, None, &any);
    let (_, token, _) = fetch().await.unwrap().unwrap();
    tokio::time::sleep(deadline + Duration::from_millis(100)).await;
    let refused = p.renew_work_item_lock(&token, lock_timeout).await;
    assert!(refused.is_err(), "renewed past the deadline");
    assert!(
        p.ack_work_item(&token, None).await.is_err(),
        "a result-less ack after the deadline deleted the work item"
    );
    let (_, _, attempt) = fetch().await.unwrap().expect("redelivered, counted");
    assert_eq!(attempt, 2);
    h.drop().await;
}

/// Without a deadline (`None`), renewals go on as long as the work does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_deadline_renewals_go_on() {
    let h = Harness::new("deadline_none", |o| o.claim.max_turn_duration = None).await;
    let p = &h.provider;
    h.create_instance("long").await;
    p.enqueue_for_orchestrator(raised("long", "go"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("long").await;
    let until = Instant::now() + DEADLINE + LEASE;
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(100)).await;
        p.renew_orchestration_item_lock(&token, LEASE)
            .await
            .unwrap();
    }
    h.drop().await;
}
