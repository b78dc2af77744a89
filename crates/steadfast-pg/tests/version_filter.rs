//! The claim's version filter (duroxide's `DispatcherCapabilityFilter`): an instance whose
//! current execution is pinned outside a dispatcher's range is never handed to it, and is
//! to a dispatcher whose range holds the pin, whether the claim reads the pin from the
//! lease row (migrations/0006_lease_pins.sql), from the execution (a row from before that
//! migration), or reaches the instance through a ready hint.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::{Harness, LONG, raised, start, started_event_of};
use common::versions::{pinned, range, started_pinned};

use std::time::Duration;

use duroxide::providers::{DispatcherCapabilityFilter, Provider};
use semver::Version;

/// A dispatcher whose range misses `pin` gets nothing; one whose range is `pin` gets
/// `instance`, whose claim it returns.
async fn handed_only_within(
    h: &Harness,
    instance: &str,
    outside: DispatcherCapabilityFilter,
    pin: &str,
) -> String {
    let got = h
        .provider
        .fetch_orchestration_item(LONG, Duration::ZERO, Some(&outside))
        .await
        .unwrap();
    assert!(
        got.is_none(),
        "an execution pinned to {pin} was handed to a dispatcher outside {outside:?}"
    );
    let (item, token, _) = h
        .provider
        .fetch_orchestration_item(LONG, Duration::ZERO, Some(&range(pin, pin)))
        .await
        .unwrap()
        .expect("a dispatcher whose range holds the pin gets the instance");
    assert_eq!(item.instance, instance);
    token
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_pinned_outside_a_dispatchers_range_is_not_handed_to_it() {
    let h = Harness::new("version_filter", |_| {}).await;
    started_pinned(&h, "pinned").await;
    h.provider
        .enqueue_for_orchestrator(raised("pinned", "go"), None)
        .await
        .unwrap();
    handed_only_within(&h, "pinned", range("2.0.0", "2.9.9"), "1.4.2").await;
    h.drop().await;
}

/// Pins change only in a turn's write, and the lease row takes the new one when that turn
/// releases it: here a new execution pinned to a newer version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_execution_moves_the_pin_the_claim_reads() {
    let h = Harness::new("version_moved", |_| {}).await;
    let p = &h.provider;
    started_pinned(&h, "moved").await;
    p.enqueue_for_orchestrator(raised("moved", "go"), None)
        .await
        .unwrap();
    let token = handed_only_within(&h, "moved", range("2.0.0", "2.9.9"), "1.4.2").await;
    p.ack_orchestration_item(
        &token,
        2,
        vec![started_event_of("moved", 2)],
        vec![],
        vec![],
        pinned(Version::new(2, 1, 0)),
        vec![],
    )
    .await
    .unwrap();
    p.enqueue_for_orchestrator(raised("moved", "again"), None)
        .await
        .unwrap();
    handed_only_within(&h, "moved", range("1.0.0", "1.9.9"), "2.1.0").await;
    h.drop().await;
}

/// A lease row from before the pin was kept on it (schema version 5) says it does not
/// know the pin: the claim reads the execution's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_row_that_does_not_know_the_pin_is_filtered_by_the_execution() {
    let h = Harness::new("version_unknown", |_| {}).await;
    started_pinned(&h, "older").await;
    h.exec(
        "UPDATE S.instance_leases SET pin_known = false, pinned_major = NULL, \
         pinned_minor = NULL, pinned_patch = NULL WHERE instance_id = 'older'",
        None,
    )
    .await;
    h.provider
        .enqueue_for_orchestrator(raised("older", "go"), None)
        .await
        .unwrap();
    handed_only_within(&h, "older", range("2.0.0", "2.9.9"), "1.4.2").await;
    h.drop().await;
}

/// An event enqueued while another session holds the lease row becomes a ready hint
/// (functions/enqueue_orchestrator.sql), which the claim filters the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_reached_through_a_ready_hint_is_filtered_too() {
    let h = Harness::new("version_hinted", |_| {}).await;
    started_pinned(&h, "hinted").await;
    let held = h
        .hold("SELECT 1 FROM S.instance_leases WHERE instance_id = 'hinted' FOR UPDATE")
        .await;
    h.provider
        .enqueue_for_orchestrator(raised("hinted", "go"), None)
        .await
        .unwrap();
    held.rollback().await.unwrap();
    let hints = h
        .sql_f64(
            "SELECT count(*)::float8 FROM S.ready_hints WHERE instance_id = $1",
            "hinted",
        )
        .await;
    assert_eq!(hints, 1.0, "the event left a ready hint");
    handed_only_within(&h, "hinted", range("2.0.0", "2.9.9"), "1.4.2").await;
    h.drop().await;
}

/// A lease row made again for an instance that already has executions (its row was
/// deleted, and a start arrives) does not know the pin either, until its first release.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_row_made_again_for_a_started_instance_reads_the_execution_pin() {
    let h = Harness::new("version_remade", |_| {}).await;
    started_pinned(&h, "remade").await;
    h.exec(
        "DELETE FROM S.instance_leases WHERE instance_id = 'remade'",
        None,
    )
    .await;
    h.provider
        .enqueue_for_orchestrator(start("remade"), None)
        .await
        .unwrap();
    handed_only_within(&h, "remade", range("2.0.0", "2.9.9"), "1.4.2").await;
    h.drop().await;
}
