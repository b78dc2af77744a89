//! In session-free mode (no LISTEN, for a transaction-mode pooler) a fetch still waits up
//! to its poll timeout: the provider's own enqueues wake it at once and its own turns hand
//! it their activities, as in `Listen` mode; another process's work, which nothing
//! announces, it finds when it re-checks (`claim.long_poll_recheck`). Before, an empty
//! session-free fetch returned at once and the runtime polled again after its
//! `dispatcher_min_poll_interval`; every activity then cost a worker claim.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::claim_counts::{SERIAL, claims};
use common::harness::{
    Harness, LONG, activity_item, completed_turn, running_metadata, start, started_event,
};
use common::long_poll::{POLL, PROMPT, slow_recheck, waiting_orchestrator_fetch};
use duroxide::providers::{Provider, TagFilter};
use steadfast_pg::{PollingMode, ProviderOptions};
use tokio::time::Instant;

async fn session_free(label: &str, tune: impl FnOnce(&mut ProviderOptions)) -> Harness {
    Harness::with_polling(label, PollingMode::SessionFree, tune).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_fetch_waits_and_its_own_enqueue_wakes_it() {
    let h = session_free("sf_wake", slow_recheck).await;
    let fetch = waiting_orchestrator_fetch(&h).await;

    let enqueued = Instant::now();
    h.provider
        .enqueue_for_orchestrator(start("sf1"), None)
        .await
        .unwrap();
    let (item, _, _) = fetch.await.unwrap().expect("the start");
    assert_eq!(item.instance, "sf1");
    assert!(enqueued.elapsed() < PROMPT, "woken, not rechecked");
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_worker_fetch_is_handed_the_activity_its_turn_schedules() {
    let _serial = SERIAL.lock().await;
    let h = session_free("sf_handoff", slow_recheck).await;
    h.provider
        .enqueue_for_orchestrator(start("sf2"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("sf2").await;
    let fetch = h
        .waiting_worker_fetch(None, TagFilter::DefaultOnly, POLL)
        .await;
    let claims_before = claims("worker");

    let acked = Instant::now();
    h.provider
        .ack_orchestration_item(
            &token,
            1,
            vec![started_event("sf2")],
            vec![activity_item("sf2", 2)],
            vec![],
            running_metadata(),
            vec![],
        )
        .await
        .unwrap();
    let (item, _, attempts) = fetch.await.unwrap().expect("the activity");
    assert!(acked.elapsed() < PROMPT, "handed at once");
    assert_eq!((item, attempts), (activity_item("sf2", 2), 1));
    assert_eq!(claims("worker") - claims_before, 0, "claims run");
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_work_is_found_at_the_recheck() {
    let recheck = Duration::from_millis(300);
    let h = session_free("sf_other", |o| o.claim.long_poll_recheck = recheck).await;
    let other =
        common::provider_with(common::other_process(&h.schema, PollingMode::SessionFree)).await;
    let fetch = waiting_orchestrator_fetch(&h).await;

    other
        .enqueue_for_orchestrator(start("sf3"), None)
        .await
        .unwrap();
    let (item, _, _) = tokio::time::timeout(PROMPT, fetch)
        .await
        .expect("found within a few rechecks, long before the poll timeout")
        .unwrap()
        .expect("the start");
    assert_eq!(item.instance, "sf3");
    other.close().await;
    h.drop().await;
}

/// A wait hears only its own process's ends in session-free mode; another process's it
/// finds when it reads the status again, every `long_poll_recheck`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_process_end_is_found_at_the_recheck() {
    let h = session_free("sf_end", |o| {
        o.claim.long_poll_recheck = Duration::from_millis(300)
    })
    .await;
    let other =
        common::provider_with(common::other_process(&h.schema, PollingMode::SessionFree)).await;
    other
        .enqueue_for_orchestrator(start("sf4"), None)
        .await
        .unwrap();
    let (_, token, _) = other
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("the start");
    let waiting = {
        let provider = h.provider.clone();
        tokio::spawn(async move { provider.wait_for_orchestration("sf4", POLL).await.unwrap() })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!waiting.is_finished(), "the wait waits");

    let (mut events, metadata) = completed_turn("sf4", 2);
    events.insert(0, started_event("sf4"));
    other
        .ack_orchestration_item(&token, 1, events, vec![], vec![], metadata, vec![])
        .await
        .unwrap();
    let status = tokio::time::timeout(PROMPT, waiting)
        .await
        .expect("found within a few rechecks, long before the wait's timeout")
        .unwrap();
    assert!(
        matches!(status, duroxide::OrchestrationStatus::Completed { .. }),
        "{status:?}"
    );
    other.close().await;
    h.drop().await;
}
