//! `kill -9` of workers while they hold a lease: inside an activity and inside a turn,
//! repeatedly, and between an orchestration claim's commit and its hand-out; each killed
//! worker replaced by a fresh process.

use std::time::Duration;

use steadfast_faults::workload::Kind;
use tokio::time::Instant;

use crate::support::fleet::{Fleet, WORKER_APPLICATION_PREFIX, Window};
use crate::support::scenario::Scenario;
use crate::support::{check_pool, sql, test_database_url, unique_schema, wait_until};

const ROUNDS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_activity_and_mid_turn_repeatedly() {
    let _slot = crate::support::scenario_slot().await;
    let url = test_database_url();
    let schema = unique_schema("kill9");
    let mut s = Scenario::new(&url, &schema, 5).await;
    let mut fleet = Fleet::new(&url, &schema);
    for _ in 0..3 {
        fleet.add(s.worker("listen", &[])).await;
    }
    s.start(&Kind::ALL, 2).await;
    for round in 0..ROUNDS {
        // Alternate the windows; a new Chain per round keeps both kinds of window coming.
        let window = if round % 2 == 0 {
            Window::MidActivity
        } else {
            Window::MidTurn
        };
        s.start(&[Kind::Chain, Kind::FanOut], 1).await;
        let victim = fleet
            .find_in(window, Duration::from_secs(60))
            .await
            .unwrap_or_else(|| panic!("round {round}: no worker entered {window:?}"));
        fleet.kill9_and_replace(victim).await;
    }
    let report = s.verify(&mut fleet, true).await;
    println!("kill -9 ({ROUNDS} kills): {report:?}");
}

/// Rounds of [`kill_9_between_claim_commit_and_hand_out`].
const CLAIM_ROUNDS: usize = 4;

/// `kill -9` of a worker after its orchestration claim has committed and before the
/// claim reaches the runtime: the attempt is counted and the lease stamped for a process
/// that is gone. The test holds `kv_store`, which a claim reads inside its one statement
/// after counting the attempt; once some worker's claims wait on it, that worker is
/// killed, then the lock is released. PostgreSQL does not notice the client is gone until
/// it sends the reply, so the claim statement finishes and commits. Each round checks
/// from the database that at least one such claim committed (its lease row was written by
/// the dead process's transaction); `verify` then checks that every instance still ends as
/// its kind expects, never-registered ones by the ceiling, with `max_attempts` held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_between_claim_commit_and_hand_out() {
    let _slot = crate::support::scenario_slot().await;
    let url = test_database_url();
    let schema = unique_schema("claimkill");
    let mut s = Scenario::new(&url, &schema, 5).await;
    let mut fleet = Fleet::new(&url, &schema);
    // Listen mode runs the claim as one autocommit statement. Session-free mode wraps it
    // in a transaction whose COMMIT the client sends after reading the reply, so a kill
    // while it waits rolls the claim back: no attempt counted, nothing to test here.
    for _ in 0..3 {
        fleet.add(s.worker("listen", &[])).await;
    }
    let pool = check_pool(&url).await;
    let lock = sql(include_str!("../sql/lock_kv_store.sql"), &schema);
    let waiting = sql(include_str!("../sql/claims_waiting_on_lock.sql"), &schema);
    let alive = sql(include_str!("../sql/backends_alive.sql"), &schema);
    let written_by = sql(include_str!("../sql/leases_written_by.sql"), &schema);
    s.start(&Kind::ALL, 1).await;
    let mut committed = Vec::new();
    for round in 0..CLAIM_ROUNDS {
        s.start(&[Kind::Chain, Kind::Unregistered], 1).await;
        let mut tx = pool.begin().await.unwrap();
        sqlx::query(&lock).execute(&mut *tx).await.unwrap();
        // Claims of the new instances arrive within milliseconds; act well inside the
        // listen workers' 2 s lock_timeout, which would roll such a claim back.
        let deadline = Instant::now() + Duration::from_millis(1_500);
        let blocked = loop {
            let rows: Vec<(i32, String, String)> = sqlx::query_as(&waiting)
                .bind(WORKER_APPLICATION_PREFIX)
                .bind(&schema)
                .fetch_all(&pool)
                .await
                .unwrap();
            if !rows.is_empty() {
                break rows;
            }
            assert!(
                Instant::now() < deadline,
                "round {round}: no orchestration claim reached the kv_store read"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let victim_name = blocked[0].1.clone();
        let victim = fleet
            .by_application_name(&victim_name)
            .unwrap_or_else(|| panic!("round {round}: {victim_name} is none of the workers"));
        let (pids, xids): (Vec<i32>, Vec<String>) = blocked
            .into_iter()
            .filter(|(_, name, _)| *name == victim_name)
            .map(|(pid, _, xid)| (pid, xid))
            .unzip();
        fleet.kill9(victim).await;
        tx.commit().await.unwrap();
        wait_until(
            "the dead worker's claim statements to finish",
            Duration::from_secs(10),
            || async {
                let n: i64 = sqlx::query_scalar(&alive)
                    .bind(&pids)
                    .fetch_one(&pool)
                    .await
                    .unwrap();
                n == 0
            },
        )
        .await;
        let leases: i64 = sqlx::query_scalar(&written_by)
            .bind(&xids)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert!(
            leases > 0,
            "round {round}: none of the dead worker's {} blocked claims committed",
            xids.len()
        );
        committed.push(leases);
        fleet.replace(victim).await;
    }
    pool.close().await;
    let report = s.verify(&mut fleet, true).await;
    println!(
        "kill -9 between claim commit and hand-out (claims committed for a dead worker per round: {committed:?}): {report:?}"
    );
}
