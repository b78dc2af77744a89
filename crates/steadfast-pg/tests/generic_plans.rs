//! The server-side functions plan their statements once per connection
//! (`plan_cache_mode = force_generic_plan`, tests/function_settings.rs), so a generic plan,
//! which cannot know how many messages an array holds, must still reach each lease row
//! through its key. Counted with the server's per-transaction scan counters: enqueues to
//! instances among other lease rows read the lease table by index only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::Harness;

/// Lease rows besides the enqueue's targets. A generic plan assumes 100 elements per array;
/// joined to a lease table this small (the benchmark's size) the statements as they were
/// hashed the whole table, 11 sequential scans in these 4 calls. The window is narrow and
/// measured: from about 2500 rows they used the index too, and below about 1000 the key
/// conditions also give way to a (then cheap) sequential scan.
const OTHER_INSTANCES: i64 = 1500;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueues_reach_lease_rows_by_key_under_generic_plans() {
    let h = Harness::new("genericplans", |_| {}).await;
    h.exec(
        &format!(
            "INSERT INTO S.instance_leases (instance_id, runnable_from)
             SELECT 'other-' || g, clock_timestamp() FROM generate_series(1, {OTHER_INSTANCES}) AS g"
        ),
        None,
    )
    .await;
    // Lease rows that exist: one runnable (its message lowers ready_at), one whose start
    // has not come (a start makes it runnable: the runnable_from update).
    h.exec(
        "INSERT INTO S.instance_leases (instance_id, runnable_from)
         VALUES ('runnable', clock_timestamp()), ('unstarted', NULL)",
        None,
    )
    .await;
    let admin = common::admin_pool().await;
    let mut tx = admin.begin().await.unwrap();
    // Several calls on one connection: whichever plan the first call made is reused.
    for round in 0..4 {
        let call = h.sql(&format!(
            "SELECT S.enqueue_orchestrator(
                 ARRAY['runnable', 'unstarted', 'new-{round}'],
                 ARRAY['{{\"ExternalRaised\":{{\"n\":{round}}}}}',
                       '{{\"StartOrchestration\":{{\"n\":{round}}}}}',
                       '{{\"StartOrchestration\":{{\"n\":{round}}}}}'],
                 ARRAY[NULL, NULL, NULL]::float8[], ARRAY[NULL, NULL, NULL]::float8[])"
        ));
        sqlx::query(&call)
            .persistent(false)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    let (seq_scans, index_scans): (i64, i64) = sqlx::query_as(&h.sql(
        "SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables
         WHERE relid = 'S.instance_leases'::regclass",
    ))
    .persistent(false)
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    let queued: i64 = sqlx::query_scalar(&h.sql(
        "SELECT count(*) FROM S.orchestrator_queue WHERE instance_id IN ('runnable', 'unstarted')",
    ))
    .persistent(false)
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    tx.rollback().await.unwrap();
    admin.close().await;
    assert_eq!(queued, 8, "every message was enqueued");
    assert!(index_scans > 0, "the lease rows were read by index");
    assert_eq!(
        seq_scans, 0,
        "the enqueues scanned the whole lease table ({index_scans} index scans)"
    );
    h.drop().await;
}
