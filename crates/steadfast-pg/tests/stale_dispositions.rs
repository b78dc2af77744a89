//! The generation fence (invariant 5): an operation carrying a lock token speaks for its
//! instance only while its claim is the instance's latest, in the incarnation it was made
//! in. Every incarnation of an instance id has a generation that is never reused (the
//! lease row's, migration 0007) and orchestrator tokens carry it. Poison dispositions
//! from an older incarnation, a superseded or a released claim are refused with
//! `PoisonLost`; ordinary acks, renewals, abandons and give-backs of an older incarnation
//! are refused too (`AckRejected` names the generation). Before the fence, the first two
//! tests committed the stale poison into the new incarnation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::{Harness, LONG, drain, poison_turn, raised, running_metadata, start};
use duroxide::providers::{ExecutionMetadata, Provider, TagFilter, WorkItem};
use duroxide::{ErrorDetails, EventKind, PoisonMessageType};
use steadfast_pg::{Diagnostic, DiagnosticKind};

const SHORT: Duration = Duration::from_millis(200);

/// A started instance with one pending event named `event`.
async fn started_with_event(h: &Harness, instance: &str, event: &str) {
    h.create_instance(instance).await;
    h.provider
        .enqueue_for_orchestrator(raised(instance, event), None)
        .await
        .unwrap();
}

/// Claim `instance`'s pending event with a short lease and let that lease run out: the
/// token of a worker that is still computing its turn.
async fn expired_claim(h: &Harness, instance: &str) -> (String, u32) {
    let (item, token, attempt) = h
        .provider
        .fetch_orchestration_item(SHORT, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("an item");
    assert_eq!(item.instance, instance);
    tokio::time::sleep(SHORT + Duration::from_millis(100)).await;
    (token, attempt)
}

/// An ordinary turn that writes nothing but `metadata`.
async fn ack_empty(
    h: &Harness,
    token: &str,
    metadata: ExecutionMetadata,
) -> Result<(), duroxide::providers::ProviderError> {
    h.provider
        .ack_orchestration_item(token, 1, vec![], vec![], vec![], metadata, vec![])
        .await
}

/// The runtime's poison disposition of execution 1 for `attempt`, acked with `token`.
async fn ack_poison(
    h: &Harness,
    instance: &str,
    token: &str,
    attempt: u32,
) -> Result<(), duroxide::providers::ProviderError> {
    let (delta, meta) = poison_turn(instance, 2, attempt);
    h.provider
        .ack_orchestration_item(token, 1, delta, vec![], vec![], meta, vec![])
        .await
}

async fn delete(h: &Harness, instance: &str) {
    h.provider
        .as_management_capability()
        .unwrap()
        .delete_instance(instance, true)
        .await
        .unwrap();
}

async fn status(h: &Harness, instance: &str) -> String {
    h.provider
        .as_management_capability()
        .unwrap()
        .get_instance_info(instance)
        .await
        .unwrap()
        .status
}

async fn lease_generation(h: &Harness, instance: &str) -> f64 {
    h.sql_f64(
        "SELECT generation::float8 FROM S.instance_leases WHERE instance_id = $1",
        instance,
    )
    .await
}

fn lost_because<'a>(diags: &'a [Diagnostic], instance: &str, why: &str) -> Option<&'a Diagnostic> {
    diags.iter().find(|d| {
        d.kind == DiagnosticKind::PoisonLost
            && d.instance_id.as_deref() == Some(instance)
            && d.reason.contains(why)
    })
}

/// The hole the fence closes: a worker's poison disposition for an instance that was
/// deleted and re-created meanwhile used to fail the new incarnation (same id, execution
/// 1, Running). It is refused, the new incarnation keeps running, nothing is dead-lettered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_poison_cannot_fail_a_new_incarnation() {
    let h = Harness::new("fence_recreated", |o| {
        o.claim.redelivery_backoff.base = Duration::ZERO
    })
    .await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    started_with_event(&h, "x", "e").await;
    let first = lease_generation(&h, "x").await;
    let (old_token, attempt) = expired_claim(&h, "x").await;

    delete(&h, "x").await;
    h.create_instance("x").await;
    assert!(
        lease_generation(&h, "x").await > first,
        "generations are never reused"
    );

    let refused = ack_poison(&h, "x", &old_token, attempt).await;
    assert!(
        refused.is_err(),
        "a stale poison must not commit into a new incarnation"
    );
    assert_eq!(status(&h, "x").await, "Running");
    let history = p.read("x").await.unwrap();
    assert!(
        !history
            .iter()
            .any(|e| matches!(e.kind, EventKind::OrchestrationFailed { .. })),
        "{history:?}"
    );
    assert!(
        p.list_dead_letters(&Default::default())
            .await
            .unwrap()
            .is_empty()
    );
    let diags = drain(&mut rx);
    assert!(
        lost_because(&diags, "x", "re-created").is_some(),
        "{diags:?}"
    );
    h.drop().await;
}

/// The other re-creation road: an enqueue to a deleted id (a late completion) re-creates
/// its lease row. A stale poison for the deleted instance must not resurrect it as a
/// failed instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_poison_cannot_resurrect_a_deleted_instance() {
    let h = Harness::new("fence_ghost", |_| {}).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    started_with_event(&h, "gone", "e").await;
    let (old_token, attempt) = expired_claim(&h, "gone").await;
    delete(&h, "gone").await;
    p.enqueue_for_orchestrator(
        WorkItem::ActivityCompleted {
            instance: "gone".into(),
            execution_id: 1,
            id: 2,
            result: "late".into(),
        },
        None,
    )
    .await
    .unwrap();

    let refused = ack_poison(&h, "gone", &old_token, attempt).await;
    assert!(refused.is_err());
    let admin = p.as_management_capability().unwrap();
    assert!(
        admin.get_instance_info("gone").await.is_err(),
        "no instance row was written"
    );
    assert!(p.read("gone").await.unwrap().is_empty());
    let diags = drain(&mut rx);
    assert!(
        lost_because(&diags, "gone", "re-created").is_some(),
        "{diags:?}"
    );
    h.drop().await;
}

/// The attempt must match: once a newer claim took the instance over, the older claim's
/// poison disposition is refused, and the newer claim's own turn commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_from_a_superseded_claim_is_refused_and_the_newer_claim_commits() {
    let h = Harness::new("fence_superseded", |o| {
        o.claim.redelivery_backoff.base = Duration::ZERO;
    })
    .await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    started_with_event(&h, "hot", "e").await;
    let (old_token, old_attempt) = expired_claim(&h, "hot").await;
    let (_, new_token, attempt) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("reclaimed after expiry");
    assert_eq!((old_attempt, attempt), (1, 2));
    for claimed in [old_attempt, attempt] {
        assert!(ack_poison(&h, "hot", &old_token, claimed).await.is_err());
    }
    let diags = drain(&mut rx);
    assert!(
        lost_because(&diags, "hot", "newer claim").is_some(),
        "{diags:?}"
    );
    ack_empty(&h, &new_token, ExecutionMetadata::default())
        .await
        .expect("the newer claim's turn commits");
    assert_eq!(status(&h, "hot").await, "Running");
    h.drop().await;
}

/// A poison disposition for an attempt other than the one its claim handed out is refused,
/// even with the claim's own (expired) token; for the right attempt it commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_must_name_the_attempt_its_claim_handed_out() {
    let h = Harness::new("fence_attempt", |_| {}).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    started_with_event(&h, "a", "e").await;
    let (token, attempt) = expired_claim(&h, "a").await;
    assert!(ack_poison(&h, "a", &token, attempt + 1).await.is_err());
    assert!(lost_because(&drain(&mut rx), "a", "attempt").is_some());
    ack_poison(&h, "a", &token, attempt)
        .await
        .expect("the claim's own attempt commits without a live lease");
    assert_eq!(status(&h, "a").await, "Failed");
    h.drop().await;
}

/// Ordinary operations of an older incarnation: the token of a live claim made before the
/// instance was deleted and re-created cannot ack, renew, abandon or give back anything of
/// the new incarnation, whose own claim is untouched and commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ordinary_operations_of_an_older_incarnation_are_refused() {
    let h = Harness::new("fence_ordinary", |_| {}).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    started_with_event(&h, "y", "e").await;
    let (_, old_token, _) = h.fetch_only("y").await;
    delete(&h, "y").await;
    started_with_event(&h, "y", "f").await;
    let (_, new_token, _) = h.fetch_only("y").await;

    assert!(
        p.renew_orchestration_item_lock(&old_token, LONG)
            .await
            .is_err()
    );
    assert!(
        p.abandon_orchestration_item(&old_token, None, false)
            .await
            .is_err()
    );
    let given_back = h
        .sql_f64("SELECT S.give_back_claim($1)::int::float8", &old_token)
        .await;
    assert_eq!(given_back, 0.0);
    assert!(ack_empty(&h, &old_token, running_metadata()).await.is_err());
    let diags = drain(&mut rx);
    let older: Vec<_> = diags
        .iter()
        .filter(|d| d.kind == DiagnosticKind::AckRejected && d.reason.contains("older incarnation"))
        .collect();
    assert_eq!(
        older.len(),
        3,
        "renew, abandon and ack each say why: {diags:?}"
    );

    p.renew_orchestration_item_lock(&new_token, LONG)
        .await
        .expect("the new claim's lease is untouched");
    p.ack_orchestration_item(
        &new_token,
        1,
        vec![],
        vec![],
        vec![],
        running_metadata(),
        vec![],
    )
    .await
    .expect("the new claim commits");
    h.drop().await;
}

/// The worker queue: an activity poison disposition of a deleted and re-created instance
/// cannot dead-letter the new incarnation's item of the same identity (instance,
/// execution, activity id) nor deliver it a failure; a worker item never carries a token
/// issued on another row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activity_poison_of_an_older_incarnation_is_refused() {
    let h = Harness::new("fence_activity", |_| {}).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    let execute = WorkItem::ActivityExecute {
        instance: "w".into(),
        execution_id: 1,
        id: 7,
        name: "Flaky".into(),
        input: "{}".into(),
        session_id: None,
        tag: None,
    };
    h.create_instance("w").await;
    p.enqueue_for_worker(execute.clone()).await.unwrap();
    let (_, old_token, attempt) = p
        .fetch_work_item(SHORT, Duration::ZERO, None, &TagFilter::default())
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(SHORT + Duration::from_millis(100)).await;
    delete(&h, "w").await;
    h.create_instance("w").await;
    p.enqueue_for_worker(execute.clone()).await.unwrap();

    let poison = WorkItem::ActivityFailed {
        instance: "w".into(),
        execution_id: 1,
        id: 7,
        details: ErrorDetails::Poison {
            attempt_count: attempt,
            max_attempts: 10,
            message_type: PoisonMessageType::Activity {
                instance: "w".into(),
                execution_id: 1,
                activity_name: "Flaky".into(),
                activity_id: 7,
            },
            message: serde_json::to_string(&execute).unwrap(),
        },
    };
    assert!(p.ack_work_item(&old_token, Some(poison)).await.is_err());
    assert!(
        p.list_dead_letters(&Default::default())
            .await
            .unwrap()
            .is_empty()
    );
    let diags = drain(&mut rx);
    assert!(
        diags.iter().any(|d| d.kind == DiagnosticKind::PoisonLost
            && d.reason.contains("no longer held by this claim")),
        "{diags:?}"
    );
    // The new incarnation's item is still there for a worker, at its first attempt.
    let (item, token, attempt) = p
        .fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::default())
        .await
        .unwrap()
        .expect("the new incarnation's item");
    assert_eq!((item, attempt), (execute, 1));
    p.ack_work_item(&token, None).await.unwrap();
    assert!(
        p.fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none(),
        "no failure was delivered to the new incarnation"
    );
    h.drop().await;
}

/// Tokens name their generation, and a claim of a re-created instance carries the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_carry_the_generation_of_their_incarnation() {
    let h = Harness::new("fence_tokens", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("t"), None).await.unwrap();
    let (_, token, _) = h.fetch_only("t").await;
    let generation = lease_generation(&h, "t").await as i64;
    assert!(token.starts_with("sf2."), "{token}");
    assert_eq!(
        token.split('.').nth(2),
        Some(generation.to_string().as_str())
    );
    h.ack_started("t", &token).await;
    delete(&h, "t").await;
    p.enqueue_for_orchestrator(start("t"), None).await.unwrap();
    let (_, token, _) = h.fetch_only("t").await;
    let next: i64 = token.split('.').nth(2).unwrap().parse().unwrap();
    assert!(next > generation);
    h.drop().await;
}

/// Found by the model (docs/model.md, counterexample C): duroxide decides poison from the
/// attempt count before it reads the history, so a message that keeps failing after its
/// execution completed (a late event) gets a poison disposition with a live lease. That
/// disposition must not fail the completed execution: its messages are dead-lettered, the
/// execution keeps its status, output and history. Before, it appended
/// `OrchestrationFailed` after `OrchestrationCompleted` and turned the instance Failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_with_a_live_lease_cannot_fail_a_completed_execution() {
    let h = Harness::new("fence_terminal", |_| {}).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    started_with_event(&h, "done", "finish").await;
    let (_, token, _) = h.fetch_only("done").await;
    let (completed, meta) = common::harness::completed_turn("done", 2);
    p.ack_orchestration_item(&token, 1, completed, vec![], vec![], meta, vec![])
        .await
        .unwrap();
    p.enqueue_for_orchestrator(raised("done", "late"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("done").await;
    p.abandon_orchestration_item(&token, None, false)
        .await
        .unwrap();
    let (_, token, attempt) = h.fetch_only("done").await;
    assert_eq!(attempt, 2);
    // The runtime numbers its failure after the history it was handed (two events).
    let (delta, meta) = poison_turn("done", 3, attempt);
    p.ack_orchestration_item(&token, 1, delta, vec![], vec![], meta, vec![])
        .await
        .expect("the disposition is taken: its messages leave the queue");
    assert_eq!(status(&h, "done").await, "Completed");
    let history = p.read("done").await.unwrap();
    assert_eq!(
        history.len(),
        2,
        "nothing written after the completion: {history:?}"
    );
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert!(letters[0].work_item.contains("late"));
    assert!(
        drain(&mut rx)
            .iter()
            .any(|d| d.kind == DiagnosticKind::PoisonCommitted && d.reason.contains("terminal")),
    );
    assert!(
        p.fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none(),
        "queue empty, lease released"
    );
    h.drop().await;
}
