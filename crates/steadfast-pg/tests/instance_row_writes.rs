//! A turn writes the instance row only when it changes it (its metadata or its current
//! execution), and the instance's updated time still moves with every turn that writes
//! history. The row's `xmin` tells whether a statement wrote a new version of it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::{Harness, raised, started_event_of};
use duroxide::providers::Provider;
use duroxide::{Event, EventKind};

/// The transaction that wrote the instance row's current version.
async fn instance_row_xmin(h: &Harness, instance: &str) -> f64 {
    h.sql_f64(
        "SELECT xmin::text::float8 FROM S.instances WHERE instance_id = $1",
        instance,
    )
    .await
}

/// The database's clock, epoch milliseconds.
async fn database_now_ms(h: &Harness) -> u64 {
    h.sql_f64(
        "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8 WHERE $1 <> ''",
        "now",
    )
    .await as u64
}

async fn updated_at(h: &Harness, instance: &str) -> u64 {
    let admin = h.provider.as_management_capability().unwrap();
    admin.get_instance_info(instance).await.unwrap().updated_at
}

fn raised_event(instance: &str, event_id: u64) -> Event {
    Event::with_event_id(
        event_id,
        instance,
        1,
        None,
        EventKind::ExternalEvent {
            name: "go".into(),
            data: "1".into(),
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_of_a_running_instance_leaves_its_row_alone_and_moves_its_updated_time() {
    let h = Harness::new("row_writes_turn", |_| {}).await;
    h.create_instance("quiet").await;
    let written = instance_row_xmin(&h, "quiet").await;
    let first_updated = updated_at(&h, "quiet").await;

    h.provider
        .enqueue_for_orchestrator(raised("quiet", "go"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("quiet").await;
    let before_ack = database_now_ms(&h).await;
    h.ack_running(&token, 1, vec![raised_event("quiet", 2)])
        .await;

    assert_eq!(
        instance_row_xmin(&h, "quiet").await,
        written,
        "a turn that changed nothing of the instance wrote its row"
    );
    let second_updated = updated_at(&h, "quiet").await;
    assert!(
        second_updated >= before_ack && second_updated >= first_updated,
        "updated_at {second_updated} did not move to the second turn (acked after {before_ack})"
    );
    assert_eq!(h.provider.read("quiet").await.unwrap().len(), 2);
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_that_starts_a_new_execution_writes_the_row() {
    let h = Harness::new("row_writes_can", |_| {}).await;
    h.create_instance("renewed").await;
    let written = instance_row_xmin(&h, "renewed").await;

    // The turn a continue-as-new leads to writes execution 2 (what it consumes does not
    // matter to the instance row).
    h.provider
        .enqueue_for_orchestrator(raised("renewed", "go"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("renewed").await;
    h.ack_running(&token, 2, vec![started_event_of("renewed", 2)])
        .await;

    assert_ne!(instance_row_xmin(&h, "renewed").await, written);
    let admin = h.provider.as_management_capability().unwrap();
    let info = admin.get_instance_info("renewed").await.unwrap();
    assert_eq!(info.current_execution_id, 2);
    h.drop().await;
}
