//! The worker queue's claim is one autocommit statement: nothing rolls it back, so a claim
//! that nobody receives must be given back explicitly, whole (lease released, attempt not
//! counted). Each test fails without that give-back: the item stays leased to nobody for
//! the whole lock timeout, one attempt closer to poison.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::{Harness, LONG, activity_item};

use std::sync::Arc;
use std::time::{Duration, Instant};

use duroxide::providers::{Provider, SessionFetchConfig, TagFilter, WorkItem};
use steadfast_pg::PollingMode;

fn session_item(instance: &str, session: &str) -> WorkItem {
    match activity_item(instance, 1) {
        WorkItem::ActivityExecute {
            instance,
            execution_id,
            id,
            name,
            input,
            tag,
            ..
        } => WorkItem::ActivityExecute {
            instance,
            execution_id,
            id,
            name,
            input,
            session_id: Some(session.into()),
            tag,
        },
        _ => unreachable!(),
    }
}

fn owner(id: &str) -> SessionFetchConfig {
    SessionFetchConfig {
        owner_id: id.into(),
        lock_timeout: LONG,
    }
}

/// Whether the queue's only item is unclaimed with no attempt counted, within 10 s of the
/// last claim statement ending (a give-back runs on its own task).
async fn given_back(h: &Harness) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && common::statement_running("worker_queue AS w").await {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let clean = h
            .sql_f64(
                "SELECT count(*)::float8 FROM S.worker_queue
                 WHERE lock_token IS NULL AND attempt_count = 0 AND $1 <> ''",
                "x",
            )
            .await;
        if clean == 1.0 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// A fetch cancelled while its claim statement runs (the runtime drops in-flight fetches
/// at shutdown; callers wrap fetches in timeouts): the statement still commits, on its own
/// task, and the claim is given back, so the next fetch gets the item at once, at attempt 1.
/// Seen without the give-back: the item stayed leased for the 30 s lock timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_claim_whose_fetch_is_cancelled_is_given_back() {
    for polling in [PollingMode::SessionFree, PollingMode::Listen] {
        let h = Harness::with_polling("worker_cancelled_fetch", polling, |_| {}).await;
        let p = &h.provider;
        p.enqueue_for_worker(activity_item("inst", 1))
            .await
            .unwrap();

        // The claim reads `sessions`: with that table locked it waits inside the statement.
        let lock = h
            .hold("LOCK TABLE S.sessions IN ACCESS EXCLUSIVE MODE")
            .await;
        let fetch = tokio::spawn({
            let p = Arc::clone(p);
            async move {
                p.fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::DefaultOnly)
                    .await
            }
        });
        assert!(
            common::waits_on_lock("claim_work_item(", Some(h.sql("S.sessions"))).await,
            "{polling:?}: the worker claim never waited on the locked table"
        );
        fetch.abort();
        assert!(fetch.await.unwrap_err().is_cancelled());
        lock.commit().await.unwrap();

        assert!(
            given_back(&h).await,
            "{polling:?}: the cancelled fetch's claim was not given back (item still leased)"
        );
        let (item, _, attempt) = p
            .fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::DefaultOnly)
            .await
            .unwrap()
            .expect("the given-back item is claimable at once");
        assert!(matches!(item, WorkItem::ActivityExecute { id: 1, .. }));
        assert_eq!(
            attempt, 1,
            "{polling:?}: the given-back claim counted an attempt"
        );
        h.drop().await;
    }
}

/// A session item claimed by one owner whose session another owner takes between the
/// claim and the session's claim (two statements now): the item is given back, not left
/// leased to an owner that may not run it, and the session's owner gets it at attempt 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_item_whose_session_was_taken_is_given_back() {
    let h = Harness::new("worker_session_race", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_worker(session_item("inst", "s1"))
        .await
        .unwrap();

    // SHARE mode lets the claim read `sessions` and commit, and stops the session's claim
    // (an INSERT) until this transaction, which gives the session to owner B, commits.
    let mut lock = h.hold("LOCK TABLE S.sessions IN SHARE MODE").await;
    let fetch_a = tokio::spawn({
        let p = Arc::clone(p);
        async move {
            p.fetch_work_item(
                LONG,
                Duration::ZERO,
                Some(&owner("A")),
                &TagFilter::DefaultOnly,
            )
            .await
        }
    });
    assert!(
        common::waits_on_lock("INSERT INTO", Some(h.sql("S.sessions"))).await,
        "owner A's session claim never waited on the locked table"
    );
    sqlx::query(&h.sql(
        "INSERT INTO S.sessions (session_id, worker_id, locked_until, last_activity_at)
         VALUES ('s1', 'B', clock_timestamp() + interval '1 hour', clock_timestamp())",
    ))
    .execute(&mut *lock)
    .await
    .unwrap();
    lock.commit().await.unwrap();

    let got_a = fetch_a.await.unwrap().unwrap();
    assert!(got_a.is_none(), "owner A got an item of B's session");
    assert!(
        given_back(&h).await,
        "the item whose session was lost stayed leased to owner A"
    );
    let (_, _, attempt) = p
        .fetch_work_item(
            LONG,
            Duration::ZERO,
            Some(&owner("B")),
            &TagFilter::DefaultOnly,
        )
        .await
        .unwrap()
        .expect("the session's owner gets the item at once");
    assert_eq!(attempt, 1, "the lost session's claim counted an attempt");
    h.drop().await;
}
