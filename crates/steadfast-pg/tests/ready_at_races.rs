//! An enqueue and a concurrent settle of its instance's `ready_at`
//! (functions/enqueue_orchestrator.sql, functions/settle_ready_at.sql): a settle that cannot
//! see a message in flight never raises `ready_at` past it, and whatever commits while the
//! enqueue runs, the message it commits is claimable.
//!
//! Found by duroxide's stress workload (bench/, 4 dispatchers, about one run in a hundred):
//! an activity's completion stayed queued with its instance's `ready_at` NULL and no hint,
//! and the orchestration never finished. The enqueue had held the lease row `FOR KEY SHARE`
//! while the turn's ack, not seeing the message, took it `FOR UPDATE` and settled
//! `ready_at` (the row's lockers afterwards: both): PostgreSQL can grant the two together
//! under a race. The enqueue now holds the instance's fence as an advisory lock from its
//! first statement on (keyed by functions/ready_at_fence_key.sql, which says more).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::{Harness, LONG, raised};
use duroxide::providers::Provider;

/// An advisory lock key the paused statement waits on.
const PAUSE: i64 = 4242;

/// Makes an update of `gate`'s lease row wait until the test lets it go: a statement that
/// lowers `gate`'s `ready_at` is paused after it took its snapshot.
async fn pause_updates_of_gate(h: &Harness) {
    h.exec(
        &format!(
            "CREATE FUNCTION S.pause_gate() RETURNS trigger LANGUAGE plpgsql AS $f$
             BEGIN
                 IF NEW.instance_id = 'gate' THEN
                     PERFORM pg_advisory_lock_shared({PAUSE});
                     PERFORM pg_advisory_unlock_shared({PAUSE});
                 END IF;
                 RETURN NEW;
             END $f$"
        ),
        None,
    )
    .await;
    h.exec(
        "CREATE TRIGGER pause_gate BEFORE UPDATE ON S.instance_leases
         FOR EACH ROW EXECUTE FUNCTION S.pause_gate()",
        None,
    )
    .await;
}

/// One call of `S.enqueue_orchestrator` with a raised event for each instance, visible now.
fn enqueue_events(instances: &[&str]) -> String {
    let names: Vec<String> = instances.iter().map(|i| format!("'{i}'")).collect();
    let items: Vec<String> = instances
        .iter()
        .map(|i| format!("$t${}$t$", serde_json::to_string(&raised(i, "e")).unwrap()))
        .collect();
    format!(
        "SELECT S.enqueue_orchestrator(ARRAY[{}], ARRAY[{}],
             array_fill(NULL::float8, ARRAY[{n}]), array_fill(NULL::float8, ARRAY[{n}]))",
        names.join(", "),
        items.join(", "),
        n = instances.len()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enqueue_in_flight_keeps_a_settle_from_raising_ready_at_past_it() {
    let h = Harness::new("ready_race", |_| {}).await;
    h.create_instance("gate").await;
    h.create_instance("late").await;
    // `late` has no message left but an early ready_at (allowed: it costs one empty try),
    // so the enqueue finds it low enough; `gate`'s is NULL, so the enqueue lowers it, and
    // is paused there, its message to `late` inserted and not committed.
    h.exec(
        "UPDATE S.instance_leases SET ready_at = now() - interval '1 minute'
         WHERE instance_id = 'late'",
        None,
    )
    .await;
    pause_updates_of_gate(&h).await;
    let paused = h
        .hold(&format!("SELECT pg_advisory_xact_lock({PAUSE})"))
        .await;

    let enqueue = h.sql(&format!(
        "/* enqueue-in-race */ {}",
        enqueue_events(&["gate", "late"])
    ));
    let enqueuing = tokio::spawn(async move {
        let admin = common::admin_pool().await;
        common::admin_exec(&admin, &enqueue, None).await;
        admin.close().await;
    });
    assert!(
        common::waits_on_lock("enqueue-in-race", None).await,
        "the enqueue pauses while it lowers gate's ready_at"
    );

    // A claim tries `late` (its ready_at has come) and finds nothing committed to hand
    // out; settling ready_at to the truth it sees (no message: NULL) would strand the
    // message in flight, so it must leave it early.
    let nothing = h
        .provider
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap();
    assert!(nothing.is_none(), "nothing is committed yet");
    let settled = h
        .sql_f64(
            "SELECT (ready_at IS NULL)::int::float8 FROM S.instance_leases
             WHERE instance_id = $1",
            "late",
        )
        .await;
    assert_eq!(
        settled, 0.0,
        "the claim raised ready_at past the enqueue in flight"
    );

    paused.rollback().await.unwrap();
    enqueuing.await.unwrap();

    let mut claimed = Vec::new();
    for _ in 0..2 {
        if let Some((item, _, _)) = h
            .provider
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
        {
            claimed.push(item.instance);
        }
    }
    claimed.sort();
    assert_eq!(
        claimed,
        ["gate", "late"],
        "both messages the enqueue committed are claimable"
    );
    h.drop().await;
}

/// An enqueue of more than 16 messages fences no instance (each fence is an entry in the
/// server's shared lock table until the commit): it leaves a hint for each message it did
/// not lower, which no settle can take back before it commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enqueue_of_more_messages_than_it_fences_leaves_hints() {
    const TARGETS: usize = 17;
    let h = Harness::new("ready_fanout", |_| {}).await;
    let instances: Vec<String> = (0..TARGETS).map(|i| format!("wide-{i:02}")).collect();
    for instance in &instances {
        h.create_instance(instance).await;
    }
    h.exec(
        "UPDATE S.instance_leases SET ready_at = now() - interval '1 minute'
         WHERE instance_id LIKE 'wide-%'",
        None,
    )
    .await;
    let names: Vec<&str> = instances.iter().map(String::as_str).collect();
    h.exec(&enqueue_events(&names), None).await;
    let hints = h
        .sql_f64(
            "SELECT count(DISTINCT instance_id)::float8 FROM S.ready_hints
             WHERE instance_id LIKE $1",
            "wide-%",
        )
        .await;
    assert_eq!(hints, TARGETS as f64);
    h.drop().await;
}
