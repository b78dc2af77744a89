//! Claims update their rows in place: the lease stamp and the message tags of an
//! orchestrator claim and the claim of a work item are HOT updates (no new index entry, no
//! dead one left for vacuum), because no index covers a column they write and their tables
//! keep free space on each page. Read from the server's per-table counters, which a backend sends as it exits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::harness::{Harness, LONG, activity_item, start};
use duroxide::providers::{Provider, TagFilter};
use steadfast_pg::PostgresProvider;

const INSTANCES: usize = 12;

/// Updates and HOT updates of `table` so far.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Updates {
    all: i64,
    hot: i64,
}

impl std::ops::Sub for Updates {
    type Output = Updates;
    fn sub(self, before: Updates) -> Updates {
        Updates {
            all: self.all - before.all,
            hot: self.hot - before.hot,
        }
    }
}

fn application(h: &Harness) -> String {
    common::application_name(&format!("hot_{}", h.schema))
}

async fn client(h: &Harness) -> Arc<PostgresProvider> {
    common::provider_with(common::named_options(&h.schema, &application(h))).await
}

/// Close `provider`, wait for its backends to exit (sending their counters), then read
/// `table`'s counters.
async fn close_and_count(h: &Harness, provider: Arc<PostgresProvider>, table: &str) -> Updates {
    provider.close().await;
    common::wait_connections_gone(&application(h), Duration::from_secs(30)).await;
    // The counters arrive as the backend exits, around the time it leaves pg_stat_activity.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let admin = common::admin_pool().await;
    let (all, hot): (i64, i64) = sqlx::query_as(
        "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
         WHERE schemaname = $1 AND relname = $2",
    )
    .persistent(false)
    .bind(&h.schema)
    .bind(table)
    .fetch_one(&admin)
    .await
    .unwrap();
    admin.close().await;
    Updates { all, hot }
}

/// Updates of `table` made by claiming `INSTANCES` started instances, one message each.
async fn updates_of_orchestrator_claims(h: &Harness, table: &str) -> Updates {
    let setup = client(h).await;
    for i in 0..INSTANCES {
        setup
            .enqueue_for_orchestrator(start(&format!("i{i}")), None)
            .await
            .unwrap();
    }
    let before = close_and_count(h, setup, table).await;

    let claimer = client(h).await;
    for _ in 0..INSTANCES {
        claimer
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .expect("a ready instance");
    }
    close_and_count(h, claimer, table).await - before
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orchestrator_claim_stamps_its_lease_in_place() {
    let h = Harness::new("hot_lease", |_| {}).await;
    let claims = updates_of_orchestrator_claims(&h, "instance_leases").await;
    assert!(
        claims.all >= INSTANCES as i64,
        "{INSTANCES} claims made {claims:?}"
    );
    assert_eq!(
        claims.hot, claims.all,
        "lease updates of {INSTANCES} claims"
    );
    h.drop().await;
}

/// The tag (lock token and attempt) a claim puts on its messages (migration 0007).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orchestrator_claim_tags_its_messages_in_place() {
    let h = Harness::new("hot_tags", |_| {}).await;
    let claims = updates_of_orchestrator_claims(&h, "orchestrator_queue").await;
    assert_eq!(
        claims.all, INSTANCES as i64,
        "{INSTANCES} claims of one message each updated {claims:?}"
    );
    assert_eq!(
        claims.hot, claims.all,
        "message updates of {INSTANCES} claims"
    );
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_item_claim_updates_its_row_in_place() {
    let h = Harness::new("hot_work", |_| {}).await;
    let setup = client(&h).await;
    for i in 0..INSTANCES {
        setup
            .enqueue_for_worker(activity_item(&format!("i{i}"), 1))
            .await
            .unwrap();
    }
    let before = close_and_count(&h, setup, "worker_queue").await;

    let claimer = client(&h).await;
    for _ in 0..INSTANCES {
        claimer
            .fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::DefaultOnly)
            .await
            .unwrap()
            .expect("a ready work item");
    }
    let claims = close_and_count(&h, claimer, "worker_queue").await - before;
    assert_eq!(
        claims.all, INSTANCES as i64,
        "{INSTANCES} claims updated {claims:?}"
    );
    assert_eq!(
        claims.hot, claims.all,
        "work item updates of {INSTANCES} claims"
    );
    h.drop().await;
}
