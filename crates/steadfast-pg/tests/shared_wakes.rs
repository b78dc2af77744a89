//! The providers of one process on the same database and schema share their wake-ups
//! (src/local_wakes.rs): in Node a `Client` and a `Runtime` each open one, and a start
//! committed through the client's wakes the runtime's waiting fetch at once, in
//! `SessionFree` mode too, where nothing else would tell it before its recheck. Their
//! listeners pass over the notifications any of them sent, and one of them passes on
//! another process's, so an enqueue is heard once in this process; it wakes one waiting
//! fetch of each provider, which may take different work (two runtimes with different
//! version ranges). A provider with `share_wakes_in_process` off behaves as another
//! process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::claim_counts::{SERIAL, empty_claims};
use common::harness::{Harness, raised, start};
use common::long_poll::{
    PROMPT, slow_recheck, waiting_orchestrator_fetch, waiting_orchestrator_fetch_on,
};
use common::versions::{PIN, range, started_pinned};
use duroxide::providers::Provider;
use steadfast_pg::{PollingMode, PostgresProvider};
use tokio::time::Instant;

/// A second provider of this process on `h`'s schema, sharing its wake-ups unless
/// `shared` is false.
async fn second_provider(h: &Harness, polling: PollingMode, shared: bool) -> Arc<PostgresProvider> {
    let mut o = if shared {
        common::options(&h.schema, polling)
    } else {
        common::other_process(&h.schema, polling)
    };
    slow_recheck(&mut o);
    common::provider_with(o).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_free_client_wakes_its_runtime_at_once() {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("shared_sf", PollingMode::SessionFree, slow_recheck).await;
    let client = second_provider(&h, PollingMode::SessionFree, true).await;
    let fetch = waiting_orchestrator_fetch(&h).await;

    let enqueued = Instant::now();
    client
        .enqueue_for_orchestrator(start("shared1"), None)
        .await
        .unwrap();
    let (item, _, _) = fetch.await.unwrap().expect("the start");
    assert_eq!(item.instance, "shared1");
    assert!(
        enqueued.elapsed() < PROMPT,
        "woken by the other provider's enqueue, not the 60 s recheck: {:?}",
        enqueued.elapsed()
    );
    client.close().await;
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_of_its_own_is_not_woken() {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("unshared_sf", PollingMode::SessionFree, slow_recheck).await;
    let other = second_provider(&h, PollingMode::SessionFree, false).await;
    let fetch = waiting_orchestrator_fetch(&h).await;

    other
        .enqueue_for_orchestrator(start("apart"), None)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !fetch.is_finished(),
        "a provider with share_wakes_in_process off is another process: nothing tells this \
         session-free fetch before its recheck"
    );
    fetch.abort();
    other.close().await;
    h.drop().await;
}

/// Two listening providers of one process, this one with two waiting fetches: an enqueue
/// by `enqueuer` wakes one of them, once. By the other provider of the process: directly,
/// and its notification wakes nothing again (one nonce for the process). By another
/// process: through one of the two listeners only. So the second fetch runs no empty
/// claim. (Every test here holds `SERIAL`: the others' fetches would count empty claims
/// too.)
async fn a_listening_process_is_woken_once(label: &str, enqueuer_shares: bool) {
    let _serial = SERIAL.lock().await;
    let h = Harness::new(label, slow_recheck).await;
    let client = second_provider(&h, PollingMode::Listen, true).await;
    let remote = second_provider(&h, PollingMode::Listen, false).await;
    let first = waiting_orchestrator_fetch(&h).await;
    let second = waiting_orchestrator_fetch(&h).await;
    let empty_before = empty_claims("orchestrator");

    let enqueuer = if enqueuer_shares { &client } else { &remote };
    enqueuer
        .enqueue_for_orchestrator(start("once"), None)
        .await
        .unwrap();
    // The notification goes out within the publish gap (5 ms); heard within a second.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (done, waiting) = if first.is_finished() {
        (first, second)
    } else {
        (second, first)
    };
    assert!(done.is_finished(), "one fetch was woken");
    let (item, _, _) = done.await.unwrap().expect("the start");
    assert_eq!(item.instance, "once");
    assert!(!waiting.is_finished(), "the other still waits");
    assert_eq!(
        empty_claims("orchestrator") - empty_before,
        0,
        "no second wake-up for one enqueue"
    );
    waiting.abort();
    client.close().await;
    remote.close().await;
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listening_process_is_woken_once_by_its_own_enqueue() {
    a_listening_process_is_woken_once("shared_listen_own", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listening_process_is_woken_once_by_another_process() {
    a_listening_process_is_woken_once("shared_listen_remote", false).await;
}

/// Two runtimes of one process on one schema, for different duroxide versions, each with
/// a waiting fetch; an event comes for an instance pinned to the version of the one that
/// waited second. One wake-up for the process would go to the first, which cannot take
/// it: found nothing, it passes nothing on, and the other would find the event only at
/// its recheck (60 s here). Each provider's fetch is woken instead.
async fn each_runtime_is_woken(polling: PollingMode) {
    let _serial = SERIAL.lock().await;
    let h =
        Harness::with_polling(&format!("shared_ranges_{polling:?}"), polling, slow_recheck).await;
    let other_runtime = second_provider(&h, polling, true).await;
    started_pinned(&h, "pinned").await;
    let newer =
        waiting_orchestrator_fetch_on(h.provider.clone(), Some(range("2.0.0", "2.9.9"))).await;
    let older = waiting_orchestrator_fetch_on(other_runtime.clone(), Some(range(PIN, PIN))).await;

    let enqueued = Instant::now();
    h.provider
        .enqueue_for_orchestrator(raised("pinned", "go"), None)
        .await
        .unwrap();
    let (item, _, _) = older
        .await
        .unwrap()
        .expect("the event, for the runtime whose range holds the pin");
    assert_eq!(item.instance, "pinned");
    assert!(
        enqueued.elapsed() < PROMPT,
        "woken by the enqueue, not the 60 s recheck: {:?}",
        enqueued.elapsed()
    );
    assert!(
        !newer.is_finished(),
        "the other runtime's fetch still waits"
    );
    newer.abort();
    other_runtime.close().await;
    h.drop().await;
}

in_both_modes!(each_runtime_is_woken);
