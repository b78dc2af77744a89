//! Connections the server drops (a restart, a failover, an idle cut by a firewall or
//! pooler). The pool does not ping a connection before every statement (that cost one
//! round trip per statement), so a dropped connection fails the next statement run on it:
//! that failure is retryable, it claims nothing and counts no attempt, the broken
//! connection is not handed out again, and the provider carries on with new ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::{Harness, LONG, activity_item, start};
use duroxide::providers::{Provider, TagFilter};

/// Terminate every server connection the provider has open; returns how many.
async fn drop_connections(application: &str) -> i64 {
    let admin = common::admin_pool().await;
    let killed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                              WHERE application_name = $1) AS k",
    )
    .persistent(false)
    .bind(application)
    .fetch_one(&admin)
    .await
    .unwrap();
    admin.close().await;
    killed
}

/// Retry `fetch` as the runtime would until it returns an item (within 10 s; after a
/// failure, fetches back off together and may return nothing for a while); every failure
/// on the way must be retryable, and there can be no more of them than connections were
/// dropped.
macro_rules! fetch_through_failures {
    ($killed:expr, $fetch:expr) => {{
        let mut failures = 0;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            assert!(
                std::time::Instant::now() < deadline,
                "the queued item was not claimed within 10 s"
            );
            match $fetch.await {
                Ok(Some(got)) => break (got, failures),
                Ok(None) => tokio::time::sleep(Duration::from_millis(20)).await,
                Err(e) => {
                    assert!(e.is_retryable(), "a dropped connection gave a permanent error: {e}");
                    failures += 1;
                    assert!(
                        failures <= $killed,
                        "{failures} failures with {} connections dropped: broken connections are handed out again",
                        $killed
                    );
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        }
    }};
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_connections_fail_one_statement_each_and_lose_nothing() {
    let application = format!("sf-dropped-{}", std::process::id());
    let h = Harness::new("dropped_connections", |o| {
        o.database_url = format!("{}?application_name={application}", o.database_url);
    })
    .await;
    let p = &h.provider;
    p.enqueue_for_worker(activity_item("inst", 1))
        .await
        .unwrap();
    p.enqueue_for_orchestrator(start("inst"), None)
        .await
        .unwrap();

    let killed = drop_connections(&application).await;
    assert!(
        killed >= 2,
        "the provider keeps connections open ({killed})"
    );
    let ((_, token, attempt), failures) = fetch_through_failures!(
        killed,
        p.fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::DefaultOnly)
    );
    assert_eq!(attempt, 1, "a failed claim counted an attempt");
    p.ack_work_item(&token, None).await.unwrap();

    let killed = drop_connections(&application).await;
    let ((item, _, attempt), _) = fetch_through_failures!(
        killed,
        p.fetch_orchestration_item(LONG, Duration::ZERO, None)
    );
    assert_eq!(item.instance, "inst");
    assert_eq!(attempt, 1, "a failed claim counted an attempt");
    eprintln!("worker fetch: {failures} retryable failure(s) after dropping the connections");
    h.drop().await;
}
