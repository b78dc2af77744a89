//! A fetch woken by an enqueue passes the wake-up on only when its claim saw more work
//! ready (src/polling.rs): one item costs one claim, not a claim and an empty one, and a
//! batch announced by one wake-up still fans out over the idle fetches. On both queues.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::claim_counts::{SERIAL, empty_claims, idle_fetches};
use common::harness::{Harness, LONG, raised, running_metadata};
use common::queues::Queue;
use duroxide::providers::Provider;
use steadfast_pg::{PollingMode, PostgresProvider, ProviderOptions};
use tokio::task::JoinSet;

const FETCHES: usize = 3;
/// Long enough that no fetch here claims again on its own before the test ends.
const RECHECK: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_secs(30);
/// Well inside `POLL`: a fetch also claims once more when its poll times out.
const FAN_OUT_WITHIN: Duration = Duration::from_secs(10);

/// `FETCHES` long-polling fetches of `queue`; each yields whether it got an item.
fn waiting_fetches(queue: Queue, provider: &Arc<PostgresProvider>) -> JoinSet<bool> {
    let mut fetches = JoinSet::new();
    for _ in 0..FETCHES {
        let p = provider.clone();
        fetches.spawn(async move { queue.fetch(&p, POLL).await });
    }
    fetches
}
/// Until `FETCHES` more fetches of `queue` than `base` are waiting (each ran an empty
/// claim or, the queue known empty, skipped it).
async fn until_waiting(queue: Queue, base: u64) {
    let deadline = tokio::time::Instant::now() + LONG;
    while idle_fetches(queue.label()) < base + FETCHES as u64 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "fetches never polled"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn slow_recheck(options: &mut ProviderOptions) {
    options.claim.long_poll_recheck = RECHECK;
}

async fn one_item_wakes_one_fetch(queue: Queue) {
    let _serial = SERIAL.lock().await;
    let base = idle_fetches(queue.label());
    let h = Harness::new(&format!("wake_one_{}", queue.label()), slow_recheck).await;
    let mut fetches = waiting_fetches(queue, &h.provider);
    until_waiting(queue, base).await;
    let waiting = empty_claims(queue.label());

    queue.enqueue(&h.provider, queue.item("one", 1)).await;
    let claimed = fetches.join_next().await.unwrap().unwrap();
    assert!(claimed, "the woken fetch claims the item");
    // A passed-on wake-up would have made another fetch claim (and find nothing) by now.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        empty_claims(queue.label()) - waiting,
        0,
        "{queue:?} claims that found nothing after one item was enqueued"
    );
    fetches.abort_all();
    h.drop().await;
}

/// Another process commits `FETCHES` items in one transaction (a turn's), so this one
/// hears one wake-up for them: the fetch it wakes saw more ready and passes it on, and so
/// on.
async fn one_wake_up_for_several_items_fans_out(queue: Queue) {
    let _serial = SERIAL.lock().await;
    let h = Harness::new(&format!("wake_fan_{}", queue.label()), slow_recheck).await;
    let other = Harness {
        schema: h.schema.clone(),
        provider: common::provider_with(common::other_process(&h.schema, PollingMode::Listen))
            .await,
    };
    other.create_instance("fan").await;
    other
        .provider
        .enqueue_for_orchestrator(raised("fan", "go"), None)
        .await
        .unwrap();
    let (_, token, _) = other.fetch_only("fan").await;

    let base = idle_fetches(queue.label());
    let mut fetches = waiting_fetches(queue, &h.provider);
    until_waiting(queue, base).await;
    let items = (1..=FETCHES as u64).map(|n| queue.item("fan", n)).collect();
    let (worker_items, orchestrator_items) = match queue {
        Queue::Worker => (items, vec![]),
        Queue::Orchestrator => (vec![], items),
    };
    other
        .provider
        .ack_orchestration_item(
            &token,
            1,
            vec![],
            worker_items,
            orchestrator_items,
            running_metadata(),
            vec![],
        )
        .await
        .unwrap();

    let mut claimed = 0;
    let deadline = tokio::time::Instant::now() + FAN_OUT_WITHIN;
    while let Ok(Some(got)) = tokio::time::timeout_at(deadline, fetches.join_next()).await {
        claimed += usize::from(got.unwrap());
    }
    assert_eq!(
        claimed, FETCHES,
        "{queue:?} items claimed within {FAN_OUT_WITHIN:?} (the recheck is {RECHECK:?})"
    );
    fetches.abort_all();
    other.provider.close().await;
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_activity_wakes_one_worker_fetch() {
    one_item_wakes_one_fetch(Queue::Worker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_message_wakes_one_orchestrator_fetch() {
    one_item_wakes_one_fetch(Queue::Orchestrator).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_wake_up_for_several_activities_fans_out() {
    one_wake_up_for_several_items_fans_out(Queue::Worker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_wake_up_for_several_starts_fans_out() {
    one_wake_up_for_several_items_fans_out(Queue::Orchestrator).await;
}
