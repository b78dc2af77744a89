//! The claim invariants of steadfast-pg, each tested against a real PostgreSQL with real
//! concurrency (other connections holding locks, concurrent fetchers). Each test names
//! the invariant it proves and would fail without it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::{
    Harness, LONG, ack_empty_turn, activity_item, completed_turn, drain, poison_turn, raised,
    running_metadata, start, started_event,
};

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use duroxide::providers::{ExecutionMetadata, Provider, TagFilter, WorkItem};
use duroxide::{ErrorDetails, Event, EventKind, PoisonMessageType};
use steadfast_pg::{DiagnosticKind, PollingMode, PostgresProvider, ProviderOptions};

/// A fetch long-polling up to 20 s: (instance it got, how long it took).
fn spawn_long_poll(
    p: &Arc<PostgresProvider>,
) -> tokio::task::JoinHandle<(Option<String>, Duration)> {
    let p = Arc::clone(p);
    tokio::spawn(async move {
        let began = Instant::now();
        let got = p
            .fetch_orchestration_item(LONG, Duration::from_secs(20), None)
            .await
            .unwrap();
        (got.map(|g| g.0.instance), began.elapsed())
    })
}

/// Invariant 1: a fetch never waits for a lock held by another transaction. Another
/// connection holds instance X's lease row (as an in-flight claim, ack or abandon does)
/// for up to 10 s; a concurrent fetch returns the other ready instance, or nothing, at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_never_waits_for_an_instance_held_by_another_transaction() {
    let h = Harness::new("never_blocks", |o| o.claim.fanout = 1).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("held-x"), None)
        .await
        .unwrap();
    p.enqueue_for_orchestrator(start("free-y"), None)
        .await
        .unwrap();

    let holder_pool = common::admin_pool().await;
    let mut holder = holder_pool.begin().await.unwrap();
    sqlx::query(&format!(
        "SELECT 1 FROM \"{}\".instance_leases WHERE instance_id = 'held-x' FOR UPDATE",
        h.schema
    ))
    .execute(&mut *holder)
    .await
    .unwrap();
    let release = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(10)).await;
        holder.rollback().await.unwrap();
    });

    // fanout = 1 makes held-x (the oldest) the first candidate every time.
    let began = Instant::now();
    let (item, token, _) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("the free instance");
    let first = began.elapsed();
    assert_eq!(item.instance, "free-y");
    p.abandon_orchestration_item(&token, Some(Duration::from_secs(60)), true)
        .await
        .unwrap();

    // Only the held instance is ready now: the fetch comes back empty instead of waiting.
    let began = Instant::now();
    let none = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap();
    let second = began.elapsed();
    assert!(none.is_none());
    // Bounds far below the 10 s hold: a blocking claim would take ~10 s here.
    assert!(
        first < Duration::from_secs(3),
        "fetch waited {first:?} behind a held lock"
    );
    assert!(
        second < Duration::from_secs(3),
        "empty fetch waited {second:?} behind a held lock"
    );
    assert!(!release.is_finished(), "the lock must still have been held");
    release.abort();
    holder_pool.close().await;
    h.drop().await;
}

/// Invariant 2: the lease starts at the claim, by the database clock. Even when the claim
/// spends time loading a large history, the returned item has at least the lock timeout
/// left by the database clock (measured right after return).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_is_stamped_by_the_database_clock_at_the_end_of_the_claim() {
    let h = Harness::new("db_clock", |_| {}).await;
    let p = &h.provider;
    h.slow_claim_instance("big").await;

    let lock_timeout = Duration::from_secs(5);
    let db_ms = "SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8 WHERE $1 <> ''";
    let before_ms = h.sql_f64(db_ms, "x").await;
    let (item, token, _) = p
        .fetch_orchestration_item(lock_timeout, Duration::ZERO, None)
        .await
        .unwrap()
        .unwrap();
    let after_ms = h.sql_f64(db_ms, "x").await;
    assert_eq!(item.history.len(), 20_000);
    let locked_at_ms = h
        .sql_f64(
            "SELECT (EXTRACT(EPOCH FROM locked_at) * 1000)::float8 FROM S.instance_leases WHERE lock_token = $1",
            &token,
        )
        .await;
    let length_ms = h
        .sql_f64(
            "SELECT (EXTRACT(EPOCH FROM (locked_until - locked_at)) * 1000)::float8 FROM S.instance_leases WHERE lock_token = $1",
            &token,
        )
        .await;
    let span = after_ms - before_ms;
    let offset = locked_at_ms - before_ms;
    println!(
        "claim span {span:.0} ms (database clock); lease started {offset:.0} ms into it, length {length_ms:.0} ms"
    );
    // Loading 20 000 events dominates the claim. A lease computed when the claim began
    // would start near 0 ms into the span and be short by the load time on return.
    assert!(
        offset >= span * 0.5,
        "lease started {offset} ms into a {span} ms claim"
    );
    assert!(
        (length_ms - lock_timeout.as_millis() as f64).abs() < 1.0,
        "{length_ms}"
    );
    h.drop().await;
}

/// Invariant 2 (full lease at return): a claim whose reply took long to transfer and
/// decode (here 20 000 history events) restarts its lease from the database clock before
/// returning, so the caller holds nearly the whole lock timeout, not the lock timeout
/// minus the transfer and decoding time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_claim_reply_is_restamped_before_it_is_returned() {
    let h = Harness::new("restamp", |_| {}).await;
    let p = &h.provider;
    h.slow_claim_instance("big").await;
    let lock_timeout = Duration::from_secs(5);
    let began = Instant::now();
    let (item, token, _) = p
        .fetch_orchestration_item(lock_timeout, Duration::ZERO, None)
        .await
        .unwrap()
        .unwrap();
    let fetch_took = began.elapsed();
    let returned = Instant::now();
    let remaining_ms = h
        .sql_f64(
            "SELECT (EXTRACT(EPOCH FROM (locked_until - clock_timestamp())) * 1000)::float8 FROM S.instance_leases WHERE lock_token = $1",
            &token,
        )
        .await;
    let since_return_ms = returned.elapsed().as_secs_f64() * 1000.0;
    let stamped_ms = h
        .sql_f64(
            "SELECT (EXTRACT(EPOCH FROM (clock_timestamp() - locked_at)) * 1000)::float8 FROM S.instance_leases WHERE lock_token = $1",
            &token,
        )
        .await;
    assert_eq!(item.history.len(), 20_000);
    println!(
        "fetch took {fetch_took:?}; {remaining_ms:.0} ms of the lease left {since_return_ms:.0} ms after return (stamped {stamped_ms:.0} ms before the second read)"
    );
    // Slack for the restamp's own reply and a loaded machine; without the restamp the
    // deficit is the whole transfer and decoding of 4 MB of history.
    let slack_ms = 250.0;
    assert!(
        remaining_ms >= lock_timeout.as_millis() as f64 - slack_ms - since_return_ms,
        "only {remaining_ms} ms left {since_return_ms} ms after a {fetch_took:?} fetch returned"
    );
    h.drop().await;
}

/// Invariant 2 (a slow reply is never dropped): when another transaction holds the lease
/// row for a moment as the restamp arrives (an enqueue lowering `ready_at`, another
/// claim's try, the `ready_at` fence), the claim is handed out with the lease it was
/// stamped with. Dropping it left the instance leased to nobody for the whole lock
/// timeout with an attempt counted: `claim_limits`' enqueue race stranded messages so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_claim_reply_is_handed_out_while_another_transaction_holds_its_lease_row() {
    let h = Harness::new("restamp_held", |_| {}).await;
    let p = &h.provider;
    h.create_instance("inst").await;
    // The holder's lock request is queued behind the claim's row lock, so it is granted as
    // the claim commits, before the client has the reply. Should the restamp still win
    // the race (it then writes the row), the round is played again.
    for round in 1..=5 {
        p.enqueue_for_orchestrator(raised("inst", "go"), None)
            .await
            .unwrap();
        let stall = stall_claims(&h).await;
        let fetch = tokio::spawn({
            let p = Arc::clone(&h.provider);
            async move { p.fetch_orchestration_item(LONG, Duration::ZERO, None).await }
        });
        assert!(
            claim_is_waiting_on_lock(&h).await,
            "the claim never stalled"
        );
        let holder = tokio::spawn({
            let sql = h.sql(
                "SELECT 1 AS restamp_holder FROM S.instance_leases
                 WHERE instance_id = 'inst' FOR NO KEY UPDATE",
            );
            async move {
                let admin = common::admin_pool().await;
                let mut tx = admin.begin().await.unwrap();
                sqlx::query(&sql)
                    .persistent(false)
                    .execute(&mut *tx)
                    .await
                    .unwrap();
                tx
            }
        });
        assert!(
            common::waits_on_lock("restamp_holder", None).await,
            "the holder never queued behind the claim"
        );
        stall.commit().await.unwrap();
        let got = fetch.await.unwrap().unwrap();
        let held = holder.await.unwrap();
        // The lease row was last written by the claim itself (same transaction as the
        // message's tag) unless the restamp got the row first.
        let restamped = h
            .sql_f64(
                "SELECT (l.xmin::text <> q.xmin::text)::int::float8
                 FROM S.instance_leases AS l JOIN S.orchestrator_queue AS q USING (instance_id)
                 WHERE l.instance_id = $1",
                "inst",
            )
            .await
            == 1.0;
        let (item, token, _) = got.expect("the claim is handed out, not dropped");
        assert_eq!(item.instance, "inst");
        held.commit().await.unwrap();
        ack_empty_turn(p, &token).await;
        if !restamped {
            println!("round {round}: the restamp met the held row and the claim was handed out");
            h.drop().await;
            return;
        }
    }
    panic!("the restamp won the race in every round; the held row was never met");
}

/// Hold `S.kv_store` in ACCESS EXCLUSIVE mode, so that a claim stops inside its statement
/// after it took the lease row and tagged the messages (it reads the KV snapshot last).
async fn stall_claims(h: &Harness) -> sqlx::Transaction<'static, sqlx::Postgres> {
    h.hold("LOCK TABLE S.kv_store IN ACCESS EXCLUSIVE MODE")
        .await
}

async fn claim_is_waiting_on_lock(h: &Harness) -> bool {
    common::waits_on_lock("claim_orchestration", Some(h.sql("S.kv_store"))).await
}

/// Start a fetch, let its claim stall inside the claim statement (after it took the lease
/// row), and cancel the fetch there. Returns the transaction holding the stall.
async fn cancel_a_stalled_fetch(h: &Harness) -> sqlx::Transaction<'static, sqlx::Postgres> {
    let lock = stall_claims(h).await;
    let fetch = tokio::spawn({
        let p = Arc::clone(&h.provider);
        async move { p.fetch_orchestration_item(LONG, Duration::ZERO, None).await }
    });
    assert!(
        claim_is_waiting_on_lock(h).await,
        "the claim never reached the stalled KV read"
    );
    fetch.abort();
    assert!(fetch.await.unwrap_err().is_cancelled());
    lock
}

/// The instance's lease and messages are as if never claimed: no token anywhere, no
/// attempt counted.
async fn untouched(h: &Harness, instance: &str) -> bool {
    let admin = common::admin_pool().await;
    let mut tx = admin.begin().await.unwrap();
    let clean: bool = sqlx::query_scalar(&h.sql(
        "SELECT (SELECT l.lock_token IS NULL AND l.attempt_count = 0
                 FROM S.instance_leases AS l WHERE l.instance_id = $1)
            AND NOT EXISTS (SELECT 1 FROM S.orchestrator_queue AS q
                            WHERE q.instance_id = $1
                              AND (q.lock_token IS NOT NULL OR q.attempt_count <> 0))",
    ))
    .persistent(false)
    .bind(instance)
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    clean
}

/// A claim whose fetch is cancelled is given back whole (the runtime cancels in-flight
/// fetches when it shuts down). The claim statement runs on its own task, so it is never
/// cut off half-way (in session-free mode it runs inside a transaction, which would
/// otherwise roll back after concurrent fetches had skipped the instance as taken); once
/// it commits with nobody left to receive the item, the lease is released and the
/// messages get their attempt back. Without the give-back the instance stayed leased to
/// nobody for the whole lock timeout, one attempt closer to poison.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_whose_fetch_is_cancelled_is_given_back_whole() {
    for polling in [PollingMode::SessionFree, PollingMode::Listen] {
        let h = Harness::with_polling("cancelled_fetch", polling, |_| {}).await;
        let p = &h.provider;
        h.create_instance("inst").await;
        p.enqueue_for_orchestrator(
            WorkItem::ExternalRaised {
                instance: "inst".into(),
                name: "go".into(),
                data: "1".into(),
            },
            None,
        )
        .await
        .unwrap();
        let lock = cancel_a_stalled_fetch(&h).await;
        lock.commit().await.unwrap();

        // The claim now commits with nobody to receive it, and is given back: the next
        // fetch gets the instance at once (not after the 30 s lease), at attempt 1.
        let deadline = Instant::now() + Duration::from_secs(10);
        let got = loop {
            if let Some(got) = p
                .fetch_orchestration_item(LONG, Duration::ZERO, None)
                .await
                .unwrap()
            {
                break got;
            }
            assert!(
                Instant::now() < deadline,
                "{polling:?}: the cancelled fetch's claim was not given back (instance still leased)"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(got.0.instance, "inst");
        assert_eq!(
            got.2, 1,
            "{polling:?}: the given-back claim still counted an attempt"
        );
        assert_eq!(got.0.messages.len(), 1);
        h.drop().await;
    }
}

/// `close()` (what the Node binding calls after the runtime shut down) waits for a claim
/// still in flight and gives it back before closing the pool, so a runtime's shutdown
/// leaves no instance leased to nobody. Seen before the fix: a claim started by a
/// dispatcher just before shutdown committed after it, holding a fresh instance for 5 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_gives_back_a_claim_still_in_flight() {
    let h = Harness::new("close_in_flight", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("fresh"), None)
        .await
        .unwrap();
    let lock = cancel_a_stalled_fetch(&h).await;
    let close = tokio::spawn({
        let p = Arc::clone(p);
        async move { p.close().await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !close.is_finished(),
        "close() did not wait for the claim in flight"
    );
    lock.commit().await.unwrap();
    close.await.unwrap();
    assert!(
        untouched(&h, "fresh").await,
        "the claim in flight at close() was left holding the instance"
    );
    common::drop_schema(&h.schema).await;
}

/// Invariant 2 (one stamp per claim): 16 connections call the claim function directly and
/// race for 24 instances. Every instance is claimed exactly once and its lease is stamped
/// exactly once: tries that lose a race, or find nothing to take, stamp nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_claim_stamps_its_lease_exactly_once_under_contention() {
    let h = Harness::new("one_stamp", |_| {}).await;
    let p = &h.provider;
    let pool = common::admin_pool().await;
    for sql in [
        "CREATE TABLE S.stamp_log (instance_id text NOT NULL, locked_at timestamptz NOT NULL)",
        "CREATE FUNCTION S.log_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
             IF NEW.locked_at IS NOT NULL AND NEW.locked_at IS DISTINCT FROM OLD.locked_at THEN
                 INSERT INTO S.stamp_log VALUES (NEW.instance_id, NEW.locked_at);
             END IF;
             RETURN NEW;
         END $$",
        "CREATE TRIGGER log_stamp BEFORE UPDATE ON S.instance_leases
         FOR EACH ROW EXECUTE FUNCTION S.log_stamp()",
    ] {
        common::admin_exec(&pool, &h.sql(sql), None).await;
    }
    pool.close().await;
    for i in 0..24 {
        p.enqueue_for_orchestrator(start(&format!("i{i:02}")), None)
            .await
            .unwrap();
    }
    let claimers = sqlx::postgres::PgPoolOptions::new()
        .max_connections(16)
        .connect(&common::database_url())
        .await
        .unwrap();
    let claim = h.sql(
        "SELECT outcome, claimed_instance FROM S.claim_orchestration(
             md5(random()::text), 30000, 0, 64, 4, 8, 5000, 20, 30000, false,
             '{0,0,0}', '{0,0,0}')",
    );
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (claimers, claim) = (claimers.clone(), claim.clone());
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            for _ in 0..200 {
                let (outcome, instance): (String, Option<String>) =
                    sqlx::query_as(&claim).fetch_one(&claimers).await.unwrap();
                match outcome.as_str() {
                    "claimed" => got.push(instance.unwrap()),
                    "empty" => break,
                    _ => {}
                }
            }
            got
        }));
    }
    let mut claimed = Vec::new();
    for t in tasks {
        claimed.extend(t.await.unwrap());
    }
    claimers.close().await;
    claimed.sort();
    let expected: Vec<String> = (0..24).map(|i| format!("i{i:02}")).collect();
    assert_eq!(claimed, expected, "each instance claimed exactly once");
    let stamps = h
        .sql_f64(
            "SELECT count(*)::float8 FROM S.stamp_log WHERE $1 <> ''",
            "x",
        )
        .await;
    let stamped_instances = h
        .sql_f64(
            "SELECT count(DISTINCT instance_id)::float8 FROM S.stamp_log WHERE $1 <> ''",
            "x",
        )
        .await;
    assert_eq!((stamps, stamped_instances), (24.0, 24.0));
    h.drop().await;
}

/// Invariant 2 (no caller clock): leases and liveness use only the database clock, so a
/// lease is valid exactly for the lock timeout whatever this process's clock says, and a
/// live lease cannot be stolen: a fetch right after another one skips the leased instance,
/// and after expiry (database time) it is claimable again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_leases_cannot_be_stolen_and_expire_by_database_time() {
    let h = Harness::new("no_steal", |o| {
        o.claim.redelivery_backoff.base = Duration::ZERO;
        o.claim.redelivery_backoff.jitter = 0.0;
    })
    .await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("a"), None).await.unwrap();
    let (_, first_token, _) = p
        .fetch_orchestration_item(Duration::from_millis(800), Duration::ZERO, None)
        .await
        .unwrap()
        .unwrap();
    assert!(
        p.fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none()
    );
    tokio::time::sleep(Duration::from_millis(900)).await;
    let (_, second_token, attempt) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("claimable after database-clock expiry");
    assert_ne!(first_token, second_token);
    assert_eq!(attempt, 2);
    h.drop().await;
}

/// Invariant 3: candidates are drawn at random among the oldest `fanout` instances;
/// with fanout = 1 the claim is strict FIFO; messages of one instance stay in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fanout_spreads_claims_over_the_oldest_candidates_and_keeps_instance_order() {
    let h = Harness::new("fanout", |o| o.claim.fanout = 4).await;
    let p = &h.provider;
    for i in 0..10 {
        p.enqueue_for_orchestrator(start(&format!("i{i}")), None)
            .await
            .unwrap();
    }
    for n in 0..3 {
        p.enqueue_for_orchestrator(
            WorkItem::ExternalRaised {
                instance: "i0".into(),
                name: format!("e{n}"),
                data: n.to_string(),
            },
            None,
        )
        .await
        .unwrap();
    }
    let mut chosen = HashSet::new();
    for _ in 0..40 {
        let (item, token, _) = p
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .unwrap();
        if item.instance == "i0" {
            let names: Vec<String> = item
                .messages
                .iter()
                .map(|m| match m {
                    WorkItem::StartOrchestration { .. } => "start".to_string(),
                    WorkItem::ExternalRaised { name, .. } => name.clone(),
                    other => format!("{other:?}"),
                })
                .collect();
            assert_eq!(
                names,
                ["start", "e0", "e1", "e2"],
                "one instance's messages stay in order"
            );
        }
        chosen.insert(item.instance.clone());
        p.abandon_orchestration_item(&token, None, true)
            .await
            .unwrap();
    }
    let oldest: HashSet<String> = (0..4).map(|i| format!("i{i}")).collect();
    assert!(
        chosen.is_subset(&oldest),
        "only the oldest 4 are candidates: {chosen:?}"
    );
    assert!(
        chosen.len() >= 2,
        "random choice among the oldest 4, got only {chosen:?}"
    );
    h.drop().await;

    let h = Harness::new("fifo", |o| o.claim.fanout = 1).await;
    for i in 0..5 {
        h.provider
            .enqueue_for_orchestrator(start(&format!("i{i}")), None)
            .await
            .unwrap();
    }
    for _ in 0..10 {
        let (item, token, _) = h.fetch_only("i0").await;
        assert_eq!(item.instance, "i0");
        h.provider
            .abandon_orchestration_item(&token, None, true)
            .await
            .unwrap();
    }
    h.drop().await;
}

/// Invariants 1 and 3 under real contention: 32 concurrent fetchers on separate
/// connections over 48 ready instances. Every fetch completes, no instance is handed to
/// two fetchers, and fan-out lets most fetchers succeed on their first pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_fetchers_never_share_an_instance() {
    // Generous bounds: this test is about exclusivity under contention; the bounds have
    // their own test, and a loaded machine must not turn slowness into a failure here.
    let h = Harness::new("contention", |o| {
        o.max_connections = 40;
        // Seen: 32 handshakes at load average 20 outlast the default 10 s acquire timeout.
        o.acquire_timeout = Duration::from_secs(120);
        o.claim.max_claim_attempts = 64;
        o.claim.max_claim_duration = Duration::from_secs(30);
    })
    .await;
    for i in 0..48 {
        h.provider
            .enqueue_for_orchestrator(start(&format!("c{i}")), None)
            .await
            .unwrap();
    }
    // Open the pool's connections first: this test is about contention between claims,
    // not about 32 connection handshakes at once (which the time bound would cut short).
    let warm: Vec<_> =
        futures_util::future::join_all((0..32).map(|_| h.provider.pool().acquire())).await;
    drop(warm);
    let mut diags = h.provider.subscribe();
    let barrier = Arc::new(tokio::sync::Barrier::new(32));
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let p = Arc::clone(&h.provider);
        let b = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            b.wait().await;
            p.fetch_orchestration_item(LONG, Duration::ZERO, None)
                .await
                .unwrap()
        }));
    }
    let mut seen = HashSet::new();
    let mut claimed = 0;
    for t in tasks {
        if let Some((item, _, _)) = t.await.unwrap() {
            claimed += 1;
            assert!(
                seen.insert(item.instance.clone()),
                "{} handed out twice",
                item.instance
            );
        }
    }
    println!("{claimed} of 32 concurrent fetches claimed an instance");
    for d in drain(&mut diags) {
        println!("{d}");
    }
    assert_eq!(
        claimed, 32,
        "every fetch must claim one of the 48 ready instances"
    );
    h.drop().await;
}

/// Invariant 4: a fetch is bounded. Every candidate is held by another transaction; the
/// fetch tries exactly `max_claim_attempts` candidates, returns None and raises
/// ClaimExhausted instead of looping.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_gives_up_after_max_claim_attempts_with_a_diagnostic() {
    let h = Harness::new("bounded", |o| {
        o.claim.max_claim_attempts = 3;
        o.claim.fanout = 8;
    })
    .await;
    let p = &h.provider;
    for i in 0..6 {
        p.enqueue_for_orchestrator(start(&format!("b{i}")), None)
            .await
            .unwrap();
    }
    let mut rx = p.subscribe();
    let holder = h.hold("SELECT 1 FROM S.instance_leases FOR UPDATE").await;
    let began = Instant::now();
    let got = p
        .fetch_orchestration_item(LONG, Duration::from_secs(5), None)
        .await
        .unwrap();
    let took = began.elapsed();
    holder.rollback().await.unwrap();
    assert!(got.is_none());
    assert!(
        took < Duration::from_secs(3),
        "exhausted fetch took {took:?}"
    );
    let diags = drain(&mut rx);
    let exhausted: Vec<_> = diags
        .iter()
        .filter(|d| d.kind == DiagnosticKind::ClaimExhausted)
        .collect();
    assert_eq!(exhausted.len(), 1, "{diags:?}");
    assert!(
        exhausted[0].reason.contains("after 3 candidate tries"),
        "{}",
        exhausted[0].reason
    );
    h.drop().await;
}

/// Invariant 7: a message whose lease ran out without an ack waits a redelivery backoff,
/// applied by the claim itself, before it is handed out again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_lease_is_redelivered_only_after_its_backoff() {
    let h = Harness::new("backoff", |o| {
        o.claim.redelivery_backoff.base = Duration::from_millis(1500);
        o.claim.redelivery_backoff.jitter = 0.0;
    })
    .await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("b"), None).await.unwrap();
    p.fetch_orchestration_item(Duration::from_millis(300), Duration::ZERO, None)
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The lease ended 200 ms ago; without the backoff it would be claimable now.
    assert!(
        p.fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none()
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let (_, _, attempt) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("redelivered after the backoff");
    assert_eq!(attempt, 2);

    // A worker item follows the same rule.
    p.enqueue_for_worker(WorkItem::ActivityExecute {
        instance: "b".into(),
        execution_id: 1,
        id: 1,
        name: "A".into(),
        input: "{}".into(),
        session_id: None,
        tag: None,
    })
    .await
    .unwrap();
    p.fetch_work_item(
        Duration::from_millis(300),
        Duration::ZERO,
        None,
        &TagFilter::default(),
    )
    .await
    .unwrap()
    .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        p.fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::default())
            .await
            .unwrap()
            .is_none()
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        p.fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::default())
            .await
            .unwrap()
            .is_some()
    );
    h.drop().await;
}

/// Invariants 5, 8, 9: a poison disposition commits although its lease expired, keyed on
/// the instance, execution and attempt count; its messages move to dead letters; the
/// diagnostic says so. An ordinary ack with the same dead token is refused, loudly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poison_commits_without_a_live_lease_but_ordinary_acks_do_not() {
    let h = Harness::new("poison_nolease", |_| {}).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    h.create_instance("hot").await;
    p.enqueue_for_orchestrator(
        WorkItem::ExternalRaised {
            instance: "hot".into(),
            name: "e".into(),
            data: "1".into(),
        },
        None,
    )
    .await
    .unwrap();
    let (_, token, attempt) = p
        .fetch_orchestration_item(Duration::from_millis(300), Duration::ZERO, None)
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(450)).await;

    let refused = p
        .ack_orchestration_item(
            &token,
            1,
            vec![],
            vec![],
            vec![],
            ExecutionMetadata::default(),
            vec![],
        )
        .await
        .unwrap_err();
    assert!(!refused.is_retryable());
    let (delta, meta) = poison_turn("hot", 2, attempt);
    p.ack_orchestration_item(&token, 1, delta, vec![], vec![], meta, vec![])
        .await
        .expect("poison commits without a live lease");

    let admin = p.as_management_capability().unwrap();
    let info = admin.get_instance_info("hot").await.unwrap();
    assert_eq!(info.status, "Failed");
    assert!(info.output.unwrap_or_default().contains("poison"));
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].instance_id, "hot");
    assert_eq!(letters[0].execution_id, Some(1));
    assert_eq!(letters[0].attempt_count, 1);
    assert!(letters[0].work_item.contains("ExternalRaised"));

    let kinds: Vec<DiagnosticKind> = drain(&mut rx).iter().map(|d| d.kind).collect();
    assert!(kinds.contains(&DiagnosticKind::AckRejected), "{kinds:?}");
    assert!(
        kinds.contains(&DiagnosticKind::PoisonCommittedWithoutLease),
        "{kinds:?}"
    );

    // Refused only when the execution is already terminal: a second disposition is lost,
    // and says why.
    let (delta, meta) = poison_turn("hot", 3, attempt);
    let lost = p
        .ack_orchestration_item(&token, 1, delta, vec![], vec![], meta, vec![])
        .await
        .unwrap_err();
    assert!(lost.message.contains("already terminal"), "{lost}");
    let diags = drain(&mut rx);
    assert!(
        diags
            .iter()
            .any(|d| d.kind == DiagnosticKind::PoisonLost && d.reason.contains("terminal"))
    );
    h.drop().await;
}

/// Invariant 5 for the worker queue: an activity poison disposition commits after its
/// lease expired; the work item moves to dead letters and the failure reaches the
/// orchestration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn activity_poison_commits_without_a_live_lease() {
    let h = Harness::new("act_poison", |_| {}).await;
    let p = &h.provider;
    h.create_instance("o").await;
    let execute = WorkItem::ActivityExecute {
        instance: "o".into(),
        execution_id: 1,
        id: 7,
        name: "Flaky".into(),
        input: "{}".into(),
        session_id: None,
        tag: None,
    };
    p.enqueue_for_worker(execute.clone()).await.unwrap();
    let (_, token, attempt) = p
        .fetch_work_item(
            Duration::from_millis(300),
            Duration::ZERO,
            None,
            &TagFilter::default(),
        )
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(450)).await;
    let poison = WorkItem::ActivityFailed {
        instance: "o".into(),
        execution_id: 1,
        id: 7,
        details: ErrorDetails::Poison {
            attempt_count: attempt,
            max_attempts: 10,
            message_type: PoisonMessageType::Activity {
                instance: "o".into(),
                execution_id: 1,
                activity_name: "Flaky".into(),
                activity_id: 7,
            },
            message: serde_json::to_string(&execute).unwrap(),
        },
    };
    let ordinary = p
        .ack_work_item(
            &token,
            Some(WorkItem::ActivityCompleted {
                instance: "o".into(),
                execution_id: 1,
                id: 7,
                result: "late".into(),
            }),
        )
        .await;
    assert!(
        ordinary.is_err(),
        "an ordinary ack with a dead lease is refused"
    );
    p.ack_work_item(&token, Some(poison))
        .await
        .expect("poison commits");
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].activity_id, Some(7));
    let (item, _, _) = h.fetch_only("o").await;
    assert!(matches!(
        &item.messages[..],
        [WorkItem::ActivityFailed {
            details: ErrorDetails::Poison { .. },
            ..
        }]
    ));
    h.drop().await;
}

/// Invariant 10: a long-polling fetch is woken by an enqueue instead of sleeping out its
/// poll timeout. (Session-free mode waits too, woken within its process:
/// `tests/session_free_waits.rs`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_poll_wakes_on_enqueue() {
    let h = Harness::new("longpoll", |o| {
        o.claim.long_poll_recheck = Duration::from_secs(60)
    })
    .await;
    let waiter = spawn_long_poll(&h.provider);
    tokio::time::sleep(Duration::from_millis(300)).await;
    h.provider
        .enqueue_for_orchestrator(start("wake"), None)
        .await
        .unwrap();
    let (got, took) = waiter.await.unwrap();
    assert_eq!(got.as_deref(), Some("wake"));
    assert!(
        took < Duration::from_secs(10),
        "woken by the enqueue, not by the 20 s timeout: {took:?}"
    );
    h.drop().await;
}

/// Invariant 10 across processes: another provider on the same schema (its own listener,
/// as another process has) long-polls both queues with a 60 s recheck; this provider's
/// enqueues wake it through the coalesced notification sent after their commits. The end
/// of an execution this provider commits reaches other processes' listeners too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_processes_are_woken_after_the_commit() {
    let h = Harness::new("wake_remote", |o| {
        o.claim.long_poll_recheck = Duration::from_secs(60)
    })
    .await;
    let mut remote_options = common::other_process(&h.schema, PollingMode::Listen);
    remote_options.claim.long_poll_recheck = Duration::from_secs(60);
    let remote = common::provider_with(remote_options).await;
    let mut ends = sqlx::postgres::PgListener::connect(&common::database_url())
        .await
        .unwrap();
    ends.listen(&format!("{}_end", h.wake_channel().await))
        .await
        .unwrap();
    let orchestration = spawn_long_poll(&remote);
    let work = {
        let remote = Arc::clone(&remote);
        tokio::spawn(async move {
            let began = Instant::now();
            let got = remote
                .fetch_work_item(LONG, Duration::from_secs(20), None, &TagFilter::default())
                .await
                .unwrap();
            (got.is_some(), began.elapsed())
        })
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    h.provider
        .enqueue_for_orchestrator(start("remote"), None)
        .await
        .unwrap();
    h.provider
        .enqueue_for_worker(activity_item("remote", 1))
        .await
        .unwrap();
    let (got, took) = orchestration.await.unwrap();
    assert_eq!(got.as_deref(), Some("remote"));
    assert!(
        took < Duration::from_secs(15),
        "woken by the other provider's notification, not the 20 s timeout: {took:?}"
    );
    let (claimed, took) = work.await.unwrap();
    assert!(
        claimed && took < Duration::from_secs(15),
        "worker fetch: {claimed} after {took:?}"
    );

    // "remote" is leased to the other provider: this one claims the next instance.
    h.provider
        .enqueue_for_orchestrator(start("ends"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("ends").await;
    let (mut events, metadata) = completed_turn("ends", 2);
    events.insert(0, started_event("ends"));
    h.provider
        .ack_orchestration_item(&token, 1, events, vec![], vec![], metadata, vec![])
        .await
        .unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(10), ends.recv())
        .await
        .expect("the end of the execution was announced")
        .unwrap();
    assert_eq!(heard.payload(), "ends");
    remote.close().await;
    h.drop().await;
}

/// No enqueue notifies inside its own transaction (a NOTIFY there serialises commits until
/// each is flushed): the enqueue statement the provider runs, committed on its own,
/// reaches no listener of the schema's channel.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enqueue_statements_send_no_notification() {
    let h = Harness::new("quiet_enqueue", |_| {}).await;
    let channel = h.wake_channel().await;
    let mut listener = sqlx::postgres::PgListener::connect(&common::database_url())
        .await
        .unwrap();
    listener.listen(&channel).await.unwrap();
    let item = serde_json::to_string(&start("quiet")).unwrap();
    h.exec(
        &h.sql(&format!(
            "SELECT S.enqueue_orchestrator(ARRAY['quiet'], ARRAY[{}], ARRAY[NULL::float8], \
             ARRAY[NULL::float8])",
            quote_literal(&item)
        )),
        None,
    )
    .await;
    let worker = serde_json::to_string(&activity_item("quiet", 1)).unwrap();
    h.exec(
        &h.sql(&format!(
            "SELECT S.enqueue_worker(ARRAY[{}], ARRAY['quiet'], ARRAY[1::bigint], \
             ARRAY[1::bigint], ARRAY[NULL::text], ARRAY[NULL::text])",
            quote_literal(&worker)
        )),
        None,
    )
    .await;
    let heard = tokio::time::timeout(Duration::from_secs(1), listener.recv()).await;
    assert!(heard.is_err(), "an enqueue's commit notified: {heard:?}");
    h.drop().await;
}

/// Work that reaches the queue without any wake-up (a notification lost with a crashed
/// publisher, or an enqueue from a build that sends none) is claimed at the next recheck
/// (`claim.long_poll_recheck`, 250 ms by default), not at the end of the poll timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_enqueued_without_a_wake_up_is_claimed_at_the_next_recheck() {
    let h = Harness::new("recheck", |_| {}).await;
    let polling = spawn_long_poll(&h.provider);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let item = serde_json::to_string(&start("unannounced")).unwrap();
    let enqueued = Instant::now();
    h.exec(
        &h.sql(&format!(
            "SELECT S.enqueue_orchestrator(ARRAY['unannounced'], ARRAY[{}], \
             ARRAY[NULL::float8], ARRAY[NULL::float8])",
            quote_literal(&item)
        )),
        None,
    )
    .await;
    let (got, _) = polling.await.unwrap();
    assert_eq!(got.as_deref(), Some("unannounced"));
    let after = enqueued.elapsed();
    assert!(
        after < Duration::from_secs(5),
        "claimed {after:?} after the silent enqueue: the recheck did not find it"
    );
    h.drop().await;
}

/// A long poll with nothing visible waits until the queue's next delayed work becomes
/// visible, read by the empty claim itself (one statement per empty poll), on both queues:
/// with the recheck at 60 s and no wake-up coming, the delayed work is claimed about when
/// it becomes visible. Without the next visible time the poll slept to its 20 s timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_wakes_when_delayed_work_becomes_visible() {
    let h = Harness::new("next_visible", |o| {
        o.claim.long_poll_recheck = Duration::from_secs(60)
    })
    .await;
    let p = &h.provider;
    const DELAY: Duration = Duration::from_millis(1500);

    p.enqueue_for_orchestrator(start("later"), Some(DELAY))
        .await
        .unwrap();
    let began = Instant::now();
    let got = p
        .fetch_orchestration_item(LONG, Duration::from_secs(20), None)
        .await
        .unwrap()
        .expect("the delayed start is claimed within the poll");
    assert_eq!(got.0.instance, "later");
    let took = began.elapsed();
    assert!(
        took < DELAY + Duration::from_secs(3),
        "orchestrator queue: claimed after {took:?}, not when the start became visible"
    );

    p.enqueue_for_worker(activity_item("later", 1))
        .await
        .unwrap();
    let (_, token, _) = p
        .fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::DefaultOnly)
        .await
        .unwrap()
        .unwrap();
    p.abandon_work_item(&token, Some(DELAY), true)
        .await
        .unwrap();
    let began = Instant::now();
    let got = p
        .fetch_work_item(LONG, Duration::from_secs(20), None, &TagFilter::DefaultOnly)
        .await
        .unwrap();
    assert!(
        got.is_some(),
        "the delayed work item is claimed within the poll"
    );
    let took = began.elapsed();
    assert!(
        took < DELAY + Duration::from_secs(3),
        "worker queue: claimed after {took:?}, not when the item became visible"
    );
    h.drop().await;
}

/// The next visible time is read after the claim has settled an early `ready_at`: a
/// started instance whose `ready_at` says "now" while its only message is delayed (left so
/// by an enqueue in flight at its release) is passed over and settled by the empty claim,
/// and the poll wakes when the message becomes visible. Read by the calling statement, whose
/// snapshot predates the settle, the early value hid the real one and the poll slept past
/// the delay (to the 60 s recheck, so to its 20 s timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_poll_wakes_at_the_ready_at_its_claim_settled() {
    let h = Harness::new("next_visible_settled", |o| {
        o.claim.long_poll_recheck = Duration::from_secs(60)
    })
    .await;
    let p = &h.provider;
    const DELAY: Duration = Duration::from_millis(1500);

    h.create_instance("early").await;
    p.enqueue_for_orchestrator(raised("early", "go"), Some(DELAY))
        .await
        .unwrap();
    // Use up the wake-up the enqueues left for this process's next waiting fetch: it
    // would end the first wait below early and hide a wrong next visible time.
    let none = p
        .fetch_orchestration_item(LONG, Duration::from_millis(100), None)
        .await
        .unwrap();
    assert!(none.is_none(), "nothing is visible yet");
    h.exec(
        "UPDATE S.instance_leases SET ready_at = clock_timestamp() - interval '1 second' \
         WHERE instance_id = $1",
        Some("early"),
    )
    .await;
    let began = Instant::now();
    let got = p
        .fetch_orchestration_item(LONG, Duration::from_secs(20), None)
        .await
        .unwrap()
        .expect("the delayed event is claimed within the poll");
    assert_eq!(got.0.instance, "early");
    let took = began.elapsed();
    assert!(
        took < DELAY + Duration::from_secs(3),
        "claimed after {took:?}, not when the event became visible"
    );
    h.drop().await;
}

/// The publisher's connection killed between two wake-ups: the next notification goes out
/// on a new connection, and the other process is still woken long before its 60 s recheck
/// or 20 s poll timeout. (The publisher's pool finds the dead connection when it hands it
/// out, so this does not reach the retry after a failed NOTIFY: with that retry removed the
/// test still passes.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_publisher_connection_loses_no_wake_up() {
    let application = format!("sf-publisher-{}", std::process::id());
    let h = Harness::new("publisher_killed", |o| {
        o.database_url = format!("{}?application_name={application}", o.database_url);
    })
    .await;
    let mut remote_options = common::other_process(&h.schema, PollingMode::Listen);
    remote_options.claim.long_poll_recheck = Duration::from_secs(60);
    let remote = common::provider_with(remote_options).await;

    let polling = spawn_long_poll(&remote);
    tokio::time::sleep(Duration::from_millis(500)).await;
    h.provider
        .enqueue_for_orchestrator(start("before-kill"), None)
        .await
        .unwrap();
    let (got, took) = polling.await.unwrap();
    assert_eq!(got.as_deref(), Some("before-kill"));
    assert!(took < Duration::from_secs(15), "first wake-up: {took:?}");

    let admin = common::admin_pool().await;
    let killed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE application_name = $1 AND query LIKE '%pg_notify%') AS k",
    )
    .bind(&application)
    .fetch_one(&admin)
    .await
    .unwrap();
    admin.close().await;
    assert_eq!(killed, 1, "the publisher's connection");

    let polling = spawn_long_poll(&remote);
    tokio::time::sleep(Duration::from_millis(500)).await;
    h.provider
        .enqueue_for_orchestrator(start("after-kill"), None)
        .await
        .unwrap();
    let (got, took) = polling.await.unwrap();
    assert_eq!(got.as_deref(), Some("after-kill"));
    assert!(
        took < Duration::from_secs(15),
        "woken by the retried notification, not the 20 s timeout: {took:?}"
    );
    remote.close().await;
    h.drop().await;
}

fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Several processes starting at once on a fresh schema all migrate safely.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_starts_migrate_once() {
    let schema = common::unique_schema("migrate");
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let o = common::options(&schema, PollingMode::SessionFree);
        tasks.push(tokio::spawn(async move {
            PostgresProvider::connect_with_options(o).await.map(|_| ())
        }));
    }
    for t in tasks {
        t.await.unwrap().expect("every concurrent start succeeds");
    }
    common::drop_schema(&schema).await;
}

const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// Invariant 2 with a skewed worker clock: a worker process whose clock is 60 s behind,
/// or 60 s ahead (libfaketime), still gets a full lease by the database clock and cannot
/// steal another worker's live lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_with_a_skewed_clock_gets_full_leases_and_cannot_steal_live_ones() {
    assert!(
        std::path::Path::new(FAKETIME_LIB).exists(),
        "libfaketime is required (apt-get install faketime; .ci/run installs it)"
    );
    let h = Harness::new("skew", |o| o.claim.fanout = 1).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("held"), None)
        .await
        .unwrap();
    p.enqueue_for_orchestrator(start("free"), None)
        .await
        .unwrap();
    let (held, _, _) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.instance, "held");
    for offset in ["-60s", "+60s"] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "skewed_clock_child",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("LD_PRELOAD", FAKETIME_LIB)
            .env("FAKETIME", offset)
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            .env("STEADFAST_SKEW_SCHEMA", &h.schema)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "child failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("SKEW_RESULT ").map(|(_, json)| json))
            .unwrap_or_else(|| panic!("no result from child:\n{stdout}"));
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        println!("clock offset {offset}: {v}");
        let skew = v["skew_ms"].as_f64().unwrap();
        assert!(
            skew.abs() > 55_000.0,
            "the child's clock was not skewed: {skew} ms"
        );
        assert_eq!(
            v["instance"], "free",
            "the skewed worker must not steal the live lease"
        );
        assert!(v["remaining_ms"].as_f64().unwrap() >= 4_750.0, "{v}");
    }
    h.drop().await;
}

/// Runs in the child process of the skew test only (it is `#[ignore]`d otherwise).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "child process of worker_with_a_skewed_clock_gets_full_leases_and_cannot_steal_live_ones"]
async fn skewed_clock_child() {
    let Ok(schema) = std::env::var("STEADFAST_SKEW_SCHEMA") else {
        return;
    };
    let mut o = common::options(&schema, PollingMode::Listen);
    o.claim.fanout = 1;
    let p = common::provider_with(o).await;
    let db_now_ms: f64 =
        sqlx::query_scalar("SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8")
            .fetch_one(p.pool())
            .await
            .unwrap();
    let local_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as f64;
    let got = p
        .fetch_orchestration_item(Duration::from_secs(5), Duration::ZERO, None)
        .await
        .unwrap();
    let (instance, remaining_ms) = match &got {
        Some((item, token, _)) => {
            let remaining: f64 = sqlx::query_scalar(&format!(
                "SELECT (EXTRACT(EPOCH FROM (locked_until - clock_timestamp())) * 1000)::float8 FROM \"{schema}\".instance_leases WHERE lock_token = $1"
            ))
            .bind(token)
            .fetch_one(p.pool())
            .await
            .unwrap();
            (item.instance.clone(), remaining)
        }
        None => (String::new(), 0.0),
    };
    if let Some((_, token, _)) = got {
        p.abandon_orchestration_item(&token, None, true)
            .await
            .unwrap();
    }
    println!(
        "SKEW_RESULT {}",
        serde_json::json!({"skew_ms": local_ms - db_now_ms, "instance": instance, "remaining_ms": remaining_ms})
    );
}

/// Invariant 10 (one wake per notification, passed on): three fetches long-poll with a
/// 60 s recheck. One ack enqueues three new instances in one statement, which sends one
/// notification. It wakes one fetch; that fetch claims something and passes the wake on,
/// and so on, so all three get work at once instead of at the next recheck.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_enqueue_notification_fans_out_over_idle_fetches() {
    let h = Harness::new("wake_chain", |o| {
        o.claim.long_poll_recheck = Duration::from_secs(60)
    })
    .await;
    h.provider
        .enqueue_for_orchestrator(start("parent"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("parent").await;
    let mut waiters = Vec::new();
    for _ in 0..3 {
        waiters.push(spawn_long_poll(&h.provider));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let children: Vec<WorkItem> = ["c1", "c2", "c3"].into_iter().map(start).collect();
    h.provider
        .ack_orchestration_item(
            &token,
            1,
            vec![started_event("parent")],
            vec![],
            children,
            running_metadata(),
            vec![],
        )
        .await
        .unwrap();
    let mut got = Vec::new();
    for w in waiters {
        let (instance, took) = w.await.unwrap();
        assert!(
            took < Duration::from_secs(15),
            "a fetch waited {took:?}: the wake was not passed on"
        );
        got.push(instance.expect("every waiter gets an instance"));
    }
    got.sort();
    assert_eq!(got, ["c1", "c2", "c3"]);
    h.drop().await;
}

/// How a test client waits for an orchestration.
#[derive(Clone, Copy, Debug)]
enum Wait {
    /// `PostgresProvider::wait_for_orchestration`: woken by the execution-end notification.
    Notified,
    /// duroxide's `Client::wait_for_orchestration`: polls the status with backoff.
    Polling,
    /// Nobody waits: what setting up the providers and the ack read on their own.
    Nobody,
}

/// Reads of `S.history` (each status read is one) while a client waits for an instance
/// that completes 1.2 s into the wait. Counted from the server's table counters; every
/// provider involved is closed before a reading, since a backend reports its counts for
/// sure when it exits (an idle one only within a second or, under contention, ten).
/// `Listen`: the end is committed by another process (heard by NOTIFY). `SessionFree`
/// (directly on the database, so that backends exit with their providers): by another
/// provider of this process, as a Node `Runtime` beside its `Client`; the waiter's
/// recheck is 1 s, as `Listen`'s backstop is.
async fn history_reads_while_waiting(wait: Wait, polling: PollingMode) -> i64 {
    let h = Harness::new("wait_end", |_| {}).await;
    let session_free = |mut o: ProviderOptions| {
        o.database_url = common::database_url();
        o.polling = PollingMode::SessionFree;
        o.claim.long_poll_recheck = Duration::from_secs(1);
        o
    };
    let (waiter_options, acker_options) = match polling {
        PollingMode::Listen => (
            common::options(&h.schema, polling),
            common::other_process(&h.schema, polling),
        ),
        PollingMode::SessionFree => (
            session_free(common::options(&h.schema, polling)),
            session_free(common::options(&h.schema, polling)),
        ),
    };
    h.provider
        .enqueue_for_orchestrator(start("w"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("w").await;
    h.provider.close().await;
    let before = h.history_reads().await;
    let waiter = common::provider_with(waiter_options).await;
    let client = duroxide::Client::new(waiter.clone());
    let waiting = tokio::spawn({
        let waiter = waiter.clone();
        async move {
            let started = Instant::now();
            let status = match wait {
                Wait::Nobody => Ok(duroxide::OrchestrationStatus::NotFound),
                Wait::Notified => {
                    waiter
                        .wait_for_orchestration("w", Duration::from_secs(30))
                        .await
                }
                Wait::Polling => {
                    client
                        .wait_for_orchestration("w", Duration::from_secs(30))
                        .await
                }
            };
            (status.unwrap(), started.elapsed())
        }
    });
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let acker = common::provider_with(acker_options).await;
    let completed = Event::with_event_id(
        2,
        "w",
        1,
        None,
        EventKind::OrchestrationCompleted {
            output: "\"done\"".into(),
        },
    );
    acker
        .ack_orchestration_item(
            &token,
            1,
            vec![started_event("w"), completed],
            vec![],
            vec![],
            ExecutionMetadata {
                status: Some("Completed".into()),
                output: Some("\"done\"".into()),
                ..running_metadata()
            },
            vec![],
        )
        .await
        .unwrap();
    let (status, took) = waiting.await.unwrap();
    assert!(
        matches!(wait, Wait::Nobody)
            || matches!(status, duroxide::OrchestrationStatus::Completed { ref output, .. } if output == "\"done\""),
        "{wait:?}: {status:?}"
    );
    assert!(
        took < Duration::from_secs(5),
        "{wait:?}: the wait took {took:?}"
    );
    waiter.close().await;
    acker.close().await;
    let n = h.history_reads().await - before;
    common::drop_schema(&h.schema).await;
    n
}

/// Waiting for an orchestration on PostgreSQL is woken by the execution-end notification
/// (migration 0005), not by polling: over the same 1.2 s wait the status is read a few
/// times (first read, the 1 s backstop, the wake), where duroxide's polling wait reads it
/// every 5–100 ms (18 times when this was written).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_an_orchestration_is_woken_by_its_end_not_by_polling() {
    let listen = PollingMode::Listen;
    let nobody = history_reads_while_waiting(Wait::Nobody, listen).await;
    let notified = history_reads_while_waiting(Wait::Notified, listen).await - nobody;
    let polling = history_reads_while_waiting(Wait::Polling, listen).await - nobody;
    println!("status reads during the wait: notified {notified}, polling {polling}");
    assert!(
        notified <= 4,
        "the notified wait read the status {notified} times"
    );
    assert!(
        polling >= 10,
        "duroxide's polling wait read the status only {polling} times: the comparison shows nothing"
    );
}

/// In session-free mode (no LISTEN) the wait is woken by an end committed by another
/// provider of its process, and otherwise reads the status every `long_poll_recheck`
/// (1 s here): a few reads over the 1.2 s wait, not one every 5–100 ms as duroxide's
/// polling wait, which it was before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_free_wait_is_woken_by_its_process_s_end_not_by_polling() {
    let session_free = PollingMode::SessionFree;
    let nobody = history_reads_while_waiting(Wait::Nobody, session_free).await;
    let notified = history_reads_while_waiting(Wait::Notified, session_free).await - nobody;
    println!("status reads during the session-free wait: {notified}");
    assert!(
        notified <= 4,
        "the session-free wait read the status {notified} times"
    );
}

/// The notified wait keeps duroxide's contract for the rest: a timeout is
/// `ClientError::Timeout` after about the timeout, an unknown instance is waited for, and
/// without LISTEN (session-free mode) it still times out so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_notified_wait_times_out_like_duroxides() {
    for polling in [PollingMode::Listen, PollingMode::SessionFree] {
        let h = Harness::with_polling("wait_timeout", polling, |_| {}).await;
        let t = Instant::now();
        let got = h
            .provider
            .wait_for_orchestration("never", Duration::from_millis(300))
            .await;
        assert!(
            matches!(got, Err(duroxide::ClientError::Timeout)),
            "{polling:?}: {got:?}"
        );
        assert!(t.elapsed() >= Duration::from_millis(300));
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{polling:?}: {:?}",
            t.elapsed()
        );
        h.drop().await;
    }
}
