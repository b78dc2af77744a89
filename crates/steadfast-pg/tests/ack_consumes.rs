//! An ack consumes exactly the messages its claim tagged, and reaches them through the
//! instance's index within the range the claim tagged (migration 0007: there is no index on
//! lock tokens), so a backlog that arrived after the claim is neither consumed nor read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::{Harness, ack_empty_turn, raised};
use duroxide::providers::Provider;
use steadfast_pg::PollingMode;

const BACKLOG: usize = 2000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ack_reads_only_what_its_claim_tagged() {
    let h = Harness::new("ack_reads", |_| {}).await;
    h.create_instance("busy").await;
    h.provider
        .enqueue_for_orchestrator(raised("busy", "first"), None)
        .await
        .unwrap();
    let (item, token, _) = h.fetch_only("busy").await;
    assert_eq!(item.messages.len(), 1);

    // After the claim: a backlog visible now, and one message that was visible an hour
    // before the claim (inside the tagged range, not tagged).
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
    let before = h.queue_rows_read().await;

    let acker = common::provider_with(common::options(&h.schema, PollingMode::Listen)).await;
    ack_empty_turn(&acker, &token).await;
    acker.close().await;
    let read = h.queue_rows_read().await - before;
    assert!(
        read < 100,
        "the ack of one message read {read} queue rows of a backlog of {BACKLOG}"
    );

    let admin = common::admin_pool().await;
    let left: i64 = sqlx::query_scalar(&h.sql(
        "SELECT count(*) FROM S.orchestrator_queue
         WHERE instance_id = 'busy' AND lock_token IS NULL",
    ))
    .persistent(false)
    .fetch_one(&admin)
    .await
    .unwrap();
    admin.close().await;
    assert_eq!(
        left as usize,
        BACKLOG + 1,
        "the ack consumed an untagged message"
    );
    h.drop().await;
}
