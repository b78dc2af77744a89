//! The server-side functions plan their statements once per connection
//! (`plan_cache_mode = force_generic_plan`, tests/function_settings.rs), so a generic plan,
//! which cannot know how many messages an array holds, must still reach each lease row
//! through its key; and a plan made while the queues were small, which the connection keeps
//! as they grow, must not scan them whole (`enable_seqscan = off` on every function).
//! Counted with the server's per-transaction scan counters.
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

/// Rows added to each queue table after the plans were made.
const GROWN_BY: i64 = 20_000;

/// A plan is made once per connection, sized by the tables as they were then; nothing
/// makes PostgreSQL plan again as a table grows (only an ANALYZE, a VACUUM or DDL does,
/// and this machine's autovacuum is off). So a claim or an enqueue planned while the
/// queues held a few rows must not have chosen a sequential scan it then keeps: with
/// 20 000 rows each would read them all, on every call, for the connection's life. Run
/// with the functions' settings as they were (no `enable_seqscan = off`): 3 sequential
/// scans of the lease table (the enqueue, the candidate scan's hints) and 2 of the worker
/// queue (the worker claim) in these 3 calls. And with the enqueue asking `NOT EXISTS` of
/// the instance row (schema version 6, first draft): PostgreSQL made that one hashed read
/// of the whole `instances` table per call, 20 010 rows here. Also counted: with the orphan
/// sweep asking `NOT EXISTS` of the lease row, one hashed read of the whole lease table per
/// sweep (20 023 rows); with the worker claim comparing `visible_at` to `clock_timestamp()`
/// (volatile, so a filter, not an index condition), a walk over every item not visible
/// yet on every claim (20 010 rows).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plans_made_on_small_tables_still_read_by_index_once_the_tables_grow() {
    let h = Harness::new("growplans", |_| {}).await;
    // An instance to enqueue to, and a leased one with a ready hint (so the candidate
    // scan joins its hints to the lease table).
    h.exec(
        "INSERT INTO S.instance_leases (instance_id, runnable_from, lock_token, locked_until)
         VALUES ('runnable', '-infinity', NULL, NULL),
                ('held', '-infinity', 'sf2.held', clock_timestamp() + interval '1 hour')",
        None,
    )
    .await;
    h.exec(
        "INSERT INTO S.ready_hints (instance_id, visible_at) VALUES ('held', '-infinity')",
        None,
    )
    .await;
    // A young database as autovacuum leaves it: a few rows, and statistics that say so.
    grow(&h, 10, "few").await;
    h.exec(
        "ANALYZE S.worker_queue, S.sessions, S.instance_leases, S.ready_hints,
                 S.orchestrator_queue, S.instances, S.executions",
        None,
    )
    .await;
    let admin = common::admin_pool().await;
    let mut tx = admin.begin().await.unwrap();
    let calls = [
        "SELECT id FROM S.claim_work_item(
             p_token_prefix => 'sfw.00000000000000000000000000000000.', p_lock_ms => 30000,
             p_jitter => 0, p_base_ms => 100, p_cap_ms => 1000, p_tag_mode => 0,
             p_tags => '{}', p_session_owner => NULL, p_next_visible => false,
             p_tell_more => true)",
        "SELECT S.enqueue_orchestrator(ARRAY['runnable'], ARRAY['{\"ExternalRaised\":{}}'],
             ARRAY[NULL]::float8[], ARRAY[NULL]::float8[])",
        "SELECT outcome FROM S.claim_orchestration(
             p_nonce => '00000000000000000000000000000000', p_lock_ms => 30000,
             p_jitter => 0, p_scan => 16, p_fanout => 8, p_max_tries => 1, p_max_ms => 1000,
             p_base_ms => 100, p_cap_ms => 1000, p_filter => false, p_min => '{0,0,0}',
             p_max => '{0,0,0}')",
        "SELECT outcome FROM S.claim_orchestration(
             p_nonce => '00000000000000000000000000000000', p_lock_ms => 30000,
             p_jitter => 0, p_scan => 16, p_fanout => 8, p_max_tries => 1, p_max_ms => 1000,
             p_base_ms => 100, p_cap_ms => 1000, p_filter => true, p_min => '{0,0,0}',
             p_max => '{9,9,9}')",
        "SELECT S.release_lease('runnable')",
        // A message left waiting, for the orphan sweep to make ready.
        "INSERT INTO S.orchestrator_queue (instance_id, work_item, visible_at, waiting)
         VALUES ('runnable', '{\"ExternalRaised\":{}}', '-infinity', true)",
        "SELECT count(*) FROM S.sweep_orphans(p_timeout_ms => 60000, p_limit => 100,
             p_error => 'orphaned')",
    ];
    run_all(&h, &mut tx, &calls).await;
    // The tables grow: work items not visible yet, idle instances, messages to them.
    sqlx::raw_sql(&growth(&h, GROWN_BY, "idle"))
        .execute(&mut *tx)
        .await
        .unwrap();
    let before = seq_scans(&h, &mut tx).await;
    let read_before = rows_read(&h, &mut tx).await;
    run_all(&h, &mut tx, &calls).await;
    let after = seq_scans(&h, &mut tx).await;
    let read_after = rows_read(&h, &mut tx).await;
    tx.rollback().await.unwrap();
    admin.close().await;
    assert_eq!(before.len(), 3, "{before:?}");
    let grown: Vec<_> = before
        .iter()
        .zip(&after)
        .filter(|((_, b), (_, a))| a > b)
        .map(|((table, b), (_, a))| format!("{table}: {} sequential scans", a - b))
        .collect();
    assert!(
        grown.is_empty(),
        "plans made on the small tables scanned the grown ones: {grown:?}"
    );
    // The calls look up a few rows by key (the enqueue whether its instance has a row,
    // the release its pin, the sweep the lease rows of the waiting messages' instances)
    // and walk the queues' ready indexes only up to what is visible: never a whole
    // table, by any scan.
    let read: Vec<_> = read_before
        .iter()
        .zip(&read_after)
        .map(|((table, b), (_, a))| (table.clone(), a - b))
        .collect();
    assert!(
        read.iter().all(|(_, n)| *n < 100),
        "plans made on the small tables read the grown ones: {read:?} rows"
    );
    h.drop().await;
}

/// Rows read so far in this transaction (by sequential, index and bitmap scans) from the
/// tables that grow with every instance kept and from the queues.
async fn rows_read(h: &Harness, tx: &mut sqlx::PgConnection) -> Vec<(String, i64)> {
    sqlx::query_as(&h.sql(
        "SELECT relname::text, (seq_tup_read + COALESCE(idx_tup_fetch, 0))::int8
         FROM pg_stat_xact_user_tables
         WHERE relid IN ('S.instances'::regclass, 'S.executions'::regclass,
                        'S.instance_leases'::regclass, 'S.orchestrator_queue'::regclass,
                        'S.worker_queue'::regclass, 'S.history'::regclass, 'S.ready_hints'::regclass)
         ORDER BY 1",
    ))
    .persistent(false)
    .fetch_all(tx)
    .await
    .unwrap()
}

/// Sequential scans so far in this transaction, per queue table.
async fn seq_scans(h: &Harness, tx: &mut sqlx::PgConnection) -> Vec<(String, i64)> {
    sqlx::query_as(&h.sql(
        "SELECT relname::text, seq_scan FROM pg_stat_xact_user_tables
         WHERE relid IN ('S.worker_queue'::regclass, 'S.instance_leases'::regclass,
                        'S.orchestrator_queue'::regclass)
         ORDER BY 1",
    ))
    .persistent(false)
    .fetch_all(tx)
    .await
    .unwrap()
}

/// `n` work items not visible yet, `n` idle instances (each with its instance and
/// execution row, pinned) and a message to each, not visible yet.
fn growth(h: &Harness, n: i64, prefix: &str) -> String {
    h.sql(&format!(
        "INSERT INTO S.worker_queue (work_item, visible_at)
         SELECT '{{}}', clock_timestamp() + interval '1 hour' FROM generate_series(1, {n});
         INSERT INTO S.instances (instance_id, orchestration_name, orchestration_version,
                                  current_execution_id)
         SELECT '{prefix}-' || g, 'Orch', '1.0.0', 1 FROM generate_series(1, {n}) AS g;
         INSERT INTO S.executions (instance_id, execution_id, pinned_major, pinned_minor,
                                   pinned_patch)
         SELECT '{prefix}-' || g, 1, 1, 0, 0 FROM generate_series(1, {n}) AS g;
         INSERT INTO S.instance_leases (instance_id, runnable_from)
         SELECT '{prefix}-' || g, '-infinity' FROM generate_series(1, {n}) AS g;
         INSERT INTO S.orchestrator_queue (instance_id, work_item, visible_at, waiting)
         SELECT '{prefix}-' || g, '{{}}', clock_timestamp() + interval '1 hour', false
         FROM generate_series(1, {n}) AS g"
    ))
}

async fn grow(h: &Harness, n: i64, prefix: &str) {
    let admin = common::admin_pool().await;
    sqlx::raw_sql(&growth(h, n, prefix))
        .execute(&admin)
        .await
        .unwrap();
    admin.close().await;
}

async fn run_all(h: &Harness, tx: &mut sqlx::PgConnection, calls: &[&str]) {
    for call in calls {
        sqlx::query(&h.sql(call))
            .persistent(false)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
}
