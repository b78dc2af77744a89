//! Pool exhaustion. On a throwaway cluster: workers with the smallest pools (2, one of
//! them taken by LISTEN) and short acquire timeouts under more concurrency than they have
//! connections; then the server's connection slots are all taken by the test for a few
//! seconds while every provider connection is dropped, so workers cannot reconnect.
//! On the test server: the workers' pools drained by statements blocked on a lock the
//! test holds, timed across lease renewals.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgConnection};
use sqlx::{ConnectOptions, Connection};
use steadfast_faults::workload::Kind;
use tokio::time::Instant;

use crate::support::cluster::start_cluster;
use crate::support::fleet::{Fleet, Window};
use crate::support::scenario::Scenario;
use crate::support::{check_pool, sql, test_database_url, unique_schema};

/// The cluster's `max_connections`: room for the workers, the test and a margin.
const SERVER_SLOTS: u32 = 30;
/// Worker arguments for the slot test: the smallest pool (one connection of it taken by
/// LISTEN in listen mode), a 200 ms acquire timeout, 7 dispatchers.
const TINY_POOL: [&str; 8] = [
    "--pool",
    "2",
    "--acquire-timeout-ms",
    "200",
    "--orchestration-concurrency",
    "3",
    "--worker-concurrency",
    "4",
];
/// How long the test keeps every slot: longer than a lease renewal interval (half of the
/// workers' 3 s leases), shorter than the client patience.
const HOLD: Duration = Duration::from_secs(4);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiny_pools_and_exhausted_server_slots() {
    let _slot = crate::support::scenario_slot().await;
    let cluster = start_cluster(SERVER_SLOTS).await;
    let url = cluster.url();
    let schema = unique_schema("pool");
    let mut s = Scenario::new(&url, &schema, 5).await;
    let mut fleet = Fleet::new(&url, &schema);
    for polling in ["listen", "session-free", "session-free"] {
        fleet.add(s.worker(polling, &TINY_POOL)).await;
    }

    s.start(&Kind::ALL, 2).await;
    fleet
        .find_in(Window::MidActivity, Duration::from_secs(60))
        .await
        .expect("work in flight before the slots are taken");

    // Take every free slot; the last attempt must be refused by the server.
    let holder = PgConnectOptions::from_str(&url)
        .unwrap()
        .application_name("steadfast_fault_holder");
    let mut held: Vec<PgConnection> = Vec::new();
    let refusal = loop {
        assert!(
            held.len() <= SERVER_SLOTS as usize,
            "the server never refused a connection"
        );
        match holder.connect().await {
            Ok(c) => held.push(c),
            Err(e) => break e,
        }
    };
    assert!(
        refusal.to_string().contains("53300") || refusal.to_string().contains("too many"),
        "expected the server to be out of connection slots, got: {refusal}"
    );
    // Drop every provider connection: workers (and the test's client) must reconnect into
    // a full server until the slots are released.
    let terminate = sql(include_str!("../sql/terminate_provider_backends.sql"), "");
    let dropped: i64 = sqlx::query_scalar(&terminate)
        .fetch_one(&mut held[0])
        .await
        .unwrap();
    assert!(dropped > 0, "no provider connection was dropped");
    tokio::time::sleep(HOLD).await;
    for c in held {
        let _ = c.close().await;
    }

    s.start(&Kind::ALL, 1).await;
    let report = s.verify(&mut fleet, false).await;
    println!("pool exhaustion (dropped {dropped} connections while full): {report:?}");
}

/// Worker arguments for the drain test: pool 2, 1 s acquire and 200 ms lock timeouts (a
/// shorter acquire timeout can fail the first connect on a loaded shared server), 4 s
/// leases renewed after 2 s, 3 s `LongStep`s.
const DRAINED_POOL: [&str; 14] = [
    "--pool",
    "2",
    "--acquire-timeout-ms",
    "1000",
    "--lock-timeout-ms",
    "200",
    "--orchestration-concurrency",
    "2",
    "--worker-concurrency",
    "4",
    "--worker-lock-ms",
    "4000",
    "--long-step-ms",
    "3000",
];

/// The workers' own pools drained while activities run. Each round, the test holds an
/// exclusive lock on the worker queue from 1.5 s to 2.7 s after a `LongStep` began (3 s
/// of work, 4 s lease, first renewal 2 s in). The workers' statements on that table
/// block and fail with `lock_timeout` (200 ms) while holding their pool's only working
/// connection, so the renewal meets transient errors while its lease is live; the
/// activity returns after the lock is gone and before the lease ends. Without renewals
/// riding out transient errors, the runtime acks such an activity without its result and
/// the instance never ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pools_drained_by_a_table_lock_across_lease_renewals() {
    let _slot = crate::support::scenario_slot().await;
    let url = test_database_url();
    let schema = unique_schema("drain");
    let mut s = Scenario::new(&url, &schema, 5).await;
    let mut fleet = Fleet::new(&url, &schema);
    for polling in ["listen", "listen", "session-free"] {
        fleet.add(s.worker(polling, &DRAINED_POOL)).await;
    }
    let lock = sql(include_str!("../sql/lock_worker_queue.sql"), &schema);
    let pool = check_pool(&url).await;
    s.start(&Kind::ALL, 1).await;
    for round in 0..ROUNDS_OF_LOCKS {
        let since = Instant::now();
        s.start(&[Kind::Long], 2).await;
        let began = fleet
            .activity_begun("long-", since, Duration::from_secs(60))
            .await
            .unwrap_or_else(|| panic!("round {round}: no LongStep began"));
        tokio::time::sleep_until(began + Duration::from_millis(1_500)).await;
        let mut tx = pool.begin().await.unwrap();
        sqlx::query(&lock).execute(&mut *tx).await.unwrap();
        tokio::time::sleep_until(began + Duration::from_millis(2_700)).await;
        tx.commit().await.unwrap();
    }
    pool.close().await;
    let report = s.verify(&mut fleet, true).await;
    println!("pools drained by a table lock ({ROUNDS_OF_LOCKS} locks): {report:?}");
}

const ROUNDS_OF_LOCKS: usize = 3;
