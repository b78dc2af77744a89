//! Lease renewals ride out transient database errors (found by the fault suite,
//! `crates/steadfast-faults`). duroxide cancels an activity whose renewal returns any
//! error and, once the activity has returned, acks its work item *without the result*:
//! a single dropped connection or a momentarily exhausted pool during a renewal used to
//! lose an activity's completion and leave its orchestration waiting forever.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use duroxide::providers::{Provider, TagFilter, WorkItem};
use duroxide::runtime::Runtime;
use duroxide::runtime::registry::ActivityRegistry;
use duroxide::{
    ActivityContext, Client, OrchestrationContext, OrchestrationRegistry, OrchestrationStatus,
    RuntimeOptions,
};
use sqlx::Postgres;
use sqlx::pool::PoolConnection;
use steadfast_pg::{PollingMode, PostgresProvider};
use tokio::sync::Notify;

/// How long the tiny pool waits for a connection before failing (transiently).
const ACQUIRE_TIMEOUT: Duration = Duration::from_millis(300);

/// A provider whose pool is tiny and gives up on a busy pool fast, so a test can make every
/// statement fail transiently by holding the pool's connections. Connecting is retried: on
/// a loaded machine opening the first connection can take longer than the acquire timeout.
async fn tiny_pool_provider(schema: &str) -> Arc<PostgresProvider> {
    let mut o = common::options(schema, PollingMode::SessionFree);
    o.max_connections = 2;
    o.acquire_timeout = ACQUIRE_TIMEOUT;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match PostgresProvider::connect_with_options(o.clone()).await {
            Ok(p) => return Arc::new(p),
            Err(e) if Instant::now() < deadline => eprintln!("connect: {e}; retrying"),
            Err(e) => panic!("provider connects: {e}"),
        }
    }
}

/// Take every connection of the provider's pool (retrying while the runtime uses one).
async fn hold_all_connections(p: &PostgresProvider) -> Vec<PoolConnection<Postgres>> {
    let mut held = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while held.len() < p.options().max_connections as usize {
        assert!(
            Instant::now() < deadline,
            "could not take the pool's connections"
        );
        if let Ok(c) = p.pool().acquire().await {
            held.push(c);
        }
    }
    held
}

async fn remaining_lease_ms(schema: &str, token: &str) -> f64 {
    let pool = common::admin_pool().await;
    let sql = include_str!("sql/work_lease_remaining_ms.sql")
        .replace("__SCHEMA__", &format!("\"{schema}\""));
    let mut tx = pool.begin().await.unwrap();
    let ms: f64 = sqlx::query_scalar(&sql)
        .persistent(false)
        .bind(token)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    pool.close().await;
    ms
}

async fn claim_one_activity(p: &PostgresProvider, lease: Duration) -> String {
    p.enqueue_for_worker(WorkItem::ActivityExecute {
        instance: "renewed".into(),
        execution_id: 1,
        id: 1,
        name: "Slow".into(),
        input: "{}".into(),
        session_id: None,
        tag: None,
    })
    .await
    .unwrap();
    let (_, token, _) = p
        .fetch_work_item(lease, Duration::ZERO, None, &TagFilter::default())
        .await
        .unwrap()
        .expect("the activity is claimable");
    token
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_lease_renewal_rides_out_an_exhausted_pool() {
    let schema = common::unique_schema("renew_transient");
    let p = tiny_pool_provider(&schema).await;
    let token = claim_one_activity(&p, Duration::from_secs(5)).await;

    let held = hold_all_connections(&p).await;
    let renewal = {
        let (p, token) = (p.clone(), token.clone());
        tokio::spawn(async move { p.renew_work_item_lock(&token, Duration::from_secs(5)).await })
    };
    // Several acquire timeouts pass while the pool is exhausted.
    tokio::time::sleep(ACQUIRE_TIMEOUT * 4).await;
    drop(held);
    renewal
        .await
        .unwrap()
        .expect("a renewal of a live lease succeeds once the pool has a connection again");
    let left = remaining_lease_ms(&schema, &token).await;
    assert!(left > 3_000.0, "the lease was not extended: {left} ms left");

    p.close().await;
    common::drop_schema(&schema).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_lease_renewal_still_fails_once_the_lease_has_ended() {
    let schema = common::unique_schema("renew_ended");
    let p = tiny_pool_provider(&schema).await;
    let lease = Duration::from_millis(800);
    let token = claim_one_activity(&p, lease).await;

    let held = hold_all_connections(&p).await;
    let started = Instant::now();
    let result = p.renew_work_item_lock(&token, lease).await;
    assert!(
        result.is_err(),
        "no renewal may succeed while the pool is held"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the renewal kept retrying long after the lease ended: {:?}",
        started.elapsed()
    );
    drop(held);
    tokio::time::sleep(lease).await;
    let late = p.renew_work_item_lock(&token, lease).await;
    assert!(late.is_err(), "an ended lease must not be renewed");

    p.close().await;
    common::drop_schema(&schema).await;
}

/// End to end on the duroxide runtime: the pool is exhausted across the activity's first
/// renewal (at half the 4 s lease) for longer than the acquire timeout, and the 3 s
/// activity returns after the pool is free and before its lease ends. Without the fix the
/// runtime cancels the activity and acks its item without the result, so the
/// orchestration never completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activity_result_survives_a_transient_error_during_renewal() {
    let schema = common::unique_schema("renew_runtime");
    let p = tiny_pool_provider(&schema).await;
    let started = Arc::new(Notify::new());
    let runs = Arc::new(AtomicU32::new(0));

    let activities = {
        let (started, runs) = (started.clone(), runs.clone());
        ActivityRegistry::builder()
            .register("Slow", move |_ctx: ActivityContext, input: String| {
                let (started, runs) = (started.clone(), runs.clone());
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    started.notify_one();
                    tokio::time::sleep(Duration::from_millis(3_000)).await;
                    Ok(format!("slow({input})"))
                }
            })
            .build()
    };
    let orchestrations = OrchestrationRegistry::builder()
        .register(
            "OneSlow",
            |ctx: OrchestrationContext, input: String| async move {
                ctx.schedule_activity("Slow", input).await
            },
        )
        .build();
    let options = RuntimeOptions {
        worker_lock_timeout: Duration::from_secs(4),
        activity_cancellation_grace_period: Duration::from_secs(5),
        dispatcher_min_poll_interval: Duration::from_millis(20),
        ..RuntimeOptions::default()
    };
    let store: Arc<dyn Provider> = p.clone();
    let runtime =
        Runtime::start_with_options(store.clone(), activities, orchestrations, options).await;
    let client = Client::new(store);
    client
        .start_orchestration("renewed-1", "OneSlow", "x")
        .await
        .unwrap();

    tokio::time::timeout(Duration::from_secs(30), started.notified())
        .await
        .expect("the activity started");
    // Exhaust the pool from the activity's start until past its first renewal (at 2 s).
    let began = Instant::now();
    let held = hold_all_connections(&p).await;
    tokio::time::sleep_until((began + Duration::from_millis(2_600)).into()).await;
    drop(held);

    let status = client
        .wait_for_orchestration("renewed-1", Duration::from_secs(30))
        .await
        .expect("the orchestration ends (without the fix its activity result is lost)");
    runtime.shutdown(Some(2_000)).await;
    match status {
        OrchestrationStatus::Completed { output, .. } => assert_eq!(output, "slow(x)"),
        other => panic!("the orchestration lost its activity result: {other:?}"),
    }
    assert_eq!(
        runs.load(Ordering::SeqCst),
        1,
        "the activity ran more than once"
    );

    p.close().await;
    common::drop_schema(&schema).await;
}
