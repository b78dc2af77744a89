//! `kill -9` of workers while they hold a lease: inside an activity and inside a turn,
//! repeatedly, and between an orchestration claim's commit and its hand-out; each killed
//! worker replaced by a fresh process.

use std::time::Duration;

use steadfast_faults::workload::Kind;
use tokio::time::Instant;

use sqlx::PgPool;

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

/// Rounds of [`kill_9_between_claim_commit_and_hand_out`] after its first, targeted one.
const CLAIM_ROUNDS: usize = 4;

/// `kill -9` of a worker after its orchestration claim has committed and before the
/// claim reaches the runtime: the attempt is counted and the lease stamped for a process
/// that is gone (see [`ClaimKiller`]). The first round loses the last claim the ceiling
/// allows (attempt `max_attempts + 1`) of an `Unregistered` instance, so the next claim is
/// the one the ceiling must stop; the other rounds lose whatever claims are in flight.
/// `verify` then checks that every instance ends as its kind expects, with
/// `max(attempt_count)` never above `max_attempts + 1`.
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
    let killer = ClaimKiller::new(&url, &schema).await;

    let unregistered = s.start(&[Kind::Unregistered], 1).await.remove(0);
    let attempts = sql(include_str!("../sql/instance_attempt_count.sql"), &schema);
    wait_until(
        "the unregistered instance's last attempt below the ceiling",
        Duration::from_secs(60),
        || async {
            let n: i64 = sqlx::query_scalar(&attempts)
                .bind(&unregistered)
                .fetch_one(&killer.pool)
                .await
                .unwrap();
            n >= i64::from(s.max_attempts)
        },
    )
    .await;
    // Its next claim hands out attempt max_attempts + 1; nothing else is in flight.
    let lost = killer.lose_claims(&mut fleet, "ceiling round").await;
    assert_eq!(
        lost,
        std::slice::from_ref(&unregistered),
        "the claim lost in the ceiling round"
    );
    let last: i64 = sqlx::query_scalar(&attempts)
        .bind(&unregistered)
        .fetch_one(&killer.pool)
        .await
        .unwrap();
    assert_eq!(
        last,
        i64::from(s.max_attempts) + 1,
        "attempt of the lost claim"
    );

    s.start(&Kind::ALL, 1).await;
    let mut committed = vec![lost.len()];
    for round in 0..CLAIM_ROUNDS {
        s.start(&[Kind::Chain, Kind::Unregistered], 1).await;
        let lost = killer
            .lose_claims(&mut fleet, &format!("round {round}"))
            .await;
        assert!(
            !lost.is_empty(),
            "round {round}: no claim committed for the dead worker"
        );
        committed.push(lost.len());
    }
    killer.pool.close().await;
    let report = s.verify(&mut fleet, true).await;
    println!(
        "kill -9 between claim commit and hand-out (claims committed for a dead worker per round: {committed:?}): {report:?}"
    );
}

/// Kills a worker while its orchestration claims are inside their statement, so that they
/// commit for a dead process. The test holds `kv_store`, which a claim reads inside its
/// one statement after counting the attempt; once some worker's claims wait on it, that
/// worker is killed, then the lock is released. PostgreSQL does not notice the client is
/// gone until it sends the reply, so the claim statement finishes and commits.
struct ClaimKiller {
    pool: PgPool,
    schema: String,
    lock: String,
    waiting: String,
    alive: String,
    written_by: String,
}

impl ClaimKiller {
    async fn new(url: &str, schema: &str) -> Self {
        Self {
            pool: check_pool(url).await,
            schema: schema.to_string(),
            lock: sql(include_str!("../sql/lock_kv_store.sql"), schema),
            waiting: sql(include_str!("../sql/claims_waiting_on_lock.sql"), schema),
            alive: sql(include_str!("../sql/backends_alive.sql"), schema),
            written_by: sql(include_str!("../sql/leases_written_by.sql"), schema),
        }
    }

    /// Lose the next claims of one worker, replace it, and return the instances whose
    /// claims committed for it (from the lease rows its transactions wrote).
    async fn lose_claims(&self, fleet: &mut Fleet, round: &str) -> Vec<String> {
        let mut tx = self.pool.begin().await.unwrap();
        sqlx::query(&self.lock).execute(&mut *tx).await.unwrap();
        // Claims arrive within milliseconds; act well inside the listen workers' 2 s
        // lock_timeout, which would roll such a claim back.
        let deadline = Instant::now() + Duration::from_millis(1_500);
        let blocked = loop {
            let rows: Vec<(i32, String, String)> = sqlx::query_as(&self.waiting)
                .bind(WORKER_APPLICATION_PREFIX)
                .bind(&self.schema)
                .fetch_all(&self.pool)
                .await
                .unwrap();
            if !rows.is_empty() {
                break rows;
            }
            assert!(
                Instant::now() < deadline,
                "{round}: no orchestration claim reached the kv_store read"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let victim_name = blocked[0].1.clone();
        let victim = fleet
            .by_application_name(&victim_name)
            .unwrap_or_else(|| panic!("{round}: {victim_name} is none of the workers"));
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
                let n: i64 = sqlx::query_scalar(&self.alive)
                    .bind(&pids)
                    .fetch_one(&self.pool)
                    .await
                    .unwrap();
                n == 0
            },
        )
        .await;
        let lost: Vec<String> = sqlx::query_scalar(&self.written_by)
            .bind(&xids)
            .fetch_all(&self.pool)
            .await
            .unwrap();
        fleet.replace(victim).await;
        lost
    }
}
