//! An ack or an abandon handles exactly the messages its claim tagged, and reaches them
//! through the instance's index within the range the claim tagged (migration 0007: there is
//! no index on lock tokens), so a backlog that arrived after the claim is neither touched
//! nor read: an instance flooded with messages whose turns keep failing costs each
//! abandon its batch, not its backlog.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::harness::{Harness, ack_empty_turn, raised};
use duroxide::providers::Provider;
use steadfast_pg::{PollingMode, PostgresProvider};

const BACKLOG: usize = 2000;

/// Claim one message of a started instance "busy", then queue a backlog visible after the
/// claim and one message visible an hour before it (inside the tagged range, not tagged).
/// Closes the harness's provider (its counters flushed) and returns the claim's token.
async fn claim_one_then_flood(h: &Harness) -> String {
    h.create_instance("busy").await;
    h.provider
        .enqueue_for_orchestrator(raised("busy", "first"), None)
        .await
        .unwrap();
    let (item, token, _) = h.fetch_only("busy").await;
    assert_eq!(item.messages.len(), 1);
    let event = serde_json::to_string(&raised("busy", "later")).unwrap();
    h.exec(
        &format!(
            "INSERT INTO S.orchestrator_queue (instance_id, work_item)
             SELECT 'busy', $1 FROM generate_series(1, {BACKLOG})"
        ),
        Some(&event),
    )
    .await;
    h.exec(
        "INSERT INTO S.orchestrator_queue (instance_id, work_item, visible_at)
         VALUES ('busy', $1, clock_timestamp() - interval '1 hour')",
        Some(&event),
    )
    .await;
    h.provider.close().await;
    token
}

/// Queue rows read by `op`, run on a fresh provider that is closed after it.
async fn queue_rows_read_by<F, Fut>(h: &Harness, op: F) -> i64
where
    F: FnOnce(Arc<PostgresProvider>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let before = h.queue_rows_read().await;
    let provider = common::provider_with(common::options(&h.schema, PollingMode::Listen)).await;
    op(provider.clone()).await;
    provider.close().await;
    h.queue_rows_read().await - before
}

/// The messages of "busy" that are not tagged, and how many attempts they hold in all.
async fn untagged(h: &Harness) -> (i64, i64) {
    let admin = common::admin_pool().await;
    let counts: (i64, i64) = sqlx::query_as(&h.sql(
        "SELECT count(*), COALESCE(sum(attempt_count), 0)::int8 FROM S.orchestrator_queue
         WHERE instance_id = 'busy' AND lock_token IS NULL",
    ))
    .persistent(false)
    .fetch_one(&admin)
    .await
    .unwrap();
    admin.close().await;
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ack_reads_only_what_its_claim_tagged() {
    let h = Harness::new("ack_reads", |_| {}).await;
    let token = claim_one_then_flood(&h).await;
    let read = queue_rows_read_by(&h, |p| async move { ack_empty_turn(&p, &token).await }).await;
    assert!(
        read < 100,
        "the ack of one message read {read} queue rows of a backlog of {BACKLOG}"
    );
    assert_eq!(
        untagged(&h).await,
        (BACKLOG as i64 + 1, 0),
        "the ack consumed or touched an untagged message"
    );
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandon_reads_only_what_its_claim_tagged() {
    let h = Harness::new("abandon_reads", |_| {}).await;
    let token = claim_one_then_flood(&h).await;
    let read = queue_rows_read_by(&h, |p| async move {
        p.abandon_orchestration_item(&token, None, false)
            .await
            .unwrap();
    })
    .await;
    assert!(
        read < 100,
        "the abandon of one message read {read} queue rows of a backlog of {BACKLOG}"
    );
    // The abandoned message keeps its attempt; the backlog's are untouched.
    let (_, attempts) = untagged(&h).await;
    assert_eq!(attempts, 0, "the abandon touched an untagged message");
    h.drop().await;
}
