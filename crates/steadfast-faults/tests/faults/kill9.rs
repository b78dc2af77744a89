//! `kill -9` of workers while they hold a lease: inside an activity and inside a turn,
//! repeatedly, and between an orchestration claim's commit and its hand-out; each killed
//! worker replaced by a fresh process.

use std::time::Duration;

use steadfast_faults::workload::Kind;
use tokio::time::Instant;

use sqlx::{PgPool, Postgres, Transaction};

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

    // Its next claim hands out attempt max_attempts + 1; nothing else is in flight.
    let (unregistered, held) = killer.hold_before_last_allowed_claim(&mut s).await;
    let lost = killer
        .lose_held_claims(held, &mut fleet, "ceiling round")
        .await;
    assert_eq!(
        lost,
        std::slice::from_ref(&unregistered),
        "the claim lost in the ceiling round"
    );
    assert_eq!(
        killer.attempts_of(&unregistered).await,
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

/// How many `Unregistered` instances the ceiling round may go through before the lock is
/// taken between an instance's last two allowed claims (see
/// [`ClaimKiller::hold_before_last_allowed_claim`]).
const CEILING_TRIES: usize = 12;

/// Kills a worker while its orchestration claims are inside their statement, so that they
/// commit for a dead process. The test holds `kv_store`, which a claim reads inside its
/// one statement after counting the attempt; once some worker's claims wait on it, that
/// worker is killed, then the lock is released. PostgreSQL does not notice the client is
/// gone until it sends the reply, so the claim statement finishes and commits.
///
/// While the lock is held no orchestration claim commits: each one waits, and the
/// workers' 2 s `lock_timeout` rolls back any the test leaves waiting, attempt and all.
struct ClaimKiller {
    pool: PgPool,
    schema: String,
    lock: String,
    waiting: String,
    alive: String,
    written_by: String,
    attempts: String,
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
            attempts: sql(include_str!("../sql/instance_attempt_count.sql"), schema),
        }
    }

    /// The highest attempt count of `instance`'s queued messages (0 when none is queued).
    async fn attempts_of(&self, instance: &str) -> i64 {
        sqlx::query_scalar(&self.attempts)
            .bind(instance)
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }

    /// Start an `Unregistered` instance and take the lock once its attempt
    /// `max_attempts` has been handed out, before attempt `max_attempts + 1` commits; returns
    /// the instance and the transaction holding the lock. The runtime's backoff before that
    /// claim is short (200 ms in the fault workers), so a slow check can miss it: the count
    /// is read again under the lock, and on a miss the lock is released and a fresh
    /// instance tried.
    async fn hold_before_last_allowed_claim(
        &self,
        s: &mut Scenario,
    ) -> (String, Transaction<'static, Postgres>) {
        let ceiling = i64::from(s.max_attempts);
        for _ in 0..CEILING_TRIES {
            let instance = s.start(&[Kind::Unregistered], 1).await.remove(0);
            wait_until(
                "the unregistered instance's last attempt below the ceiling",
                Duration::from_secs(60),
                || async { self.attempts_of(&instance).await >= ceiling },
            )
            .await;
            let held = self.hold().await;
            // No claim commits while the lock is held: this count stays until it is released.
            let now = self.attempts_of(&instance).await;
            if now == ceiling {
                return (instance, held);
            }
            println!("ceiling round: {instance} was at attempt {now} once locked; another");
            held.rollback().await.unwrap();
        }
        panic!(
            "ceiling round: {CEILING_TRIES} instances passed their last allowed claim before the lock"
        );
    }

    /// Block every orchestration claim at its `kv_store` read.
    async fn hold(&self) -> Transaction<'static, Postgres> {
        let mut tx = self.pool.begin().await.unwrap();
        sqlx::query(&self.lock).execute(&mut *tx).await.unwrap();
        tx
    }

    /// Lose the next claims of one worker, replace it, and return the instances whose
    /// claims committed for it (from the lease rows its transactions wrote).
    async fn lose_claims(&self, fleet: &mut Fleet, round: &str) -> Vec<String> {
        let held = self.hold().await;
        self.lose_held_claims(held, fleet, round).await
    }

    /// [`lose_claims`](Self::lose_claims) with the lock already held by `tx`.
    async fn lose_held_claims(
        &self,
        tx: Transaction<'static, Postgres>,
        fleet: &mut Fleet,
        round: &str,
    ) -> Vec<String> {
        // The first claim to wait is found within milliseconds of its arrival, well inside
        // the workers' 2 s lock_timeout, which would roll it back; so its arrival may take
        // longer than that (a runtime backoff, a long poll's recheck on a loaded machine).
        let deadline = Instant::now() + Duration::from_secs(10);
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
