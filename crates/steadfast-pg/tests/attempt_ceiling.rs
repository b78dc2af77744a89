//! Invariant 6, the attempt ceiling: with `claim.max_attempts = M` no orchestrator message
//! or work item is ever handed out more than `M + 1` times. For the orchestrator queue the
//! claim statement itself decides it (`functions/fail_stopped_instance.sql`), so no lost reply,
//! crash or failing statement after the claim can let a count climb past `M + 1`; it fails
//! the execution as poison with the runtime's event shape and dead-letters the messages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::{Harness, LONG, drain, running_metadata, start, started_event};
use duroxide::providers::{ExecutionMetadata, OrchestrationItem, Provider, TagFilter, WorkItem};
use duroxide::{ErrorDetails, Event, EventKind, PoisonMessageType};
use steadfast_pg::{DiagnosticKind, ProviderOptions};

const CLAIM_REPLY_LOST: &str = include_str!("sql/claim_reply_lost.sql");
const HIGHEST_ATTEMPT: &str = include_str!("sql/highest_attempt.sql");

fn event_version() -> String {
    duroxide::providers::current_build_version().to_string()
}

/// One claim whose reply is lost, on a connection of its own: what the claim statement
/// committed is all that happens.
async fn claim_reply_lost(h: &Harness, pool: &sqlx::PgPool, max_attempts: i32) -> String {
    let mut tx = pool.begin().await.unwrap();
    let outcome: String = sqlx::query_scalar(&h.sql(CLAIM_REPLY_LOST))
        .persistent(false)
        .bind(max_attempts)
        .bind(event_version())
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    outcome
}

async fn highest_attempt(h: &Harness, instance: &str) -> u32 {
    h.sql_f64(HIGHEST_ATTEMPT, instance).await as u32
}

/// Fetch and abandon `instance` (keeping the attempt) until the queue has nothing more of
/// it for the runtime: how many times it was handed out, and the first item of another
/// instance met on the way (left claimed), if any.
async fn hand_out_until_stopped(
    h: &Harness,
    instance: &str,
    max: u32,
) -> (u32, Option<(OrchestrationItem, String)>) {
    let p = &h.provider;
    let mut handed_out = 0;
    while let Some((item, token, attempt)) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
    {
        if item.instance != instance {
            return (handed_out, Some((item, token)));
        }
        handed_out += 1;
        assert!(attempt <= max, "attempt {attempt} handed out past {max}");
        p.abandon_orchestration_item(&token, None, false)
            .await
            .unwrap();
        assert!(handed_out <= max, "handed out {handed_out} times");
    }
    (handed_out, None)
}

fn poison_of(event: &Event) -> Option<(u32, u32, &PoisonMessageType)> {
    match &event.kind {
        EventKind::OrchestrationFailed {
            details:
                ErrorDetails::Poison {
                    attempt_count,
                    max_attempts,
                    message_type,
                    ..
                },
        } => Some((*attempt_count, *max_attempts, message_type)),
        _ => None,
    }
}

fn failures(history: &[Event]) -> usize {
    history
        .iter()
        .filter(|e| matches!(e.kind, EventKind::OrchestrationFailed { .. }))
        .count()
}

/// Invariants 6 and 8: with an attempt ceiling, a message is never handed out more than
/// max_attempts + 1 times; the claim itself fails the instance as poison (same shape as
/// the runtime's) and dead-letters the messages; requeue and purge work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attempt_ceiling_is_enforced_inside_the_claim() {
    let h = Harness::new("ceiling", |o| o.claim.max_attempts = Some(3)).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    p.enqueue_for_orchestrator(start("stuck"), None)
        .await
        .unwrap();
    let (handed_out, _) = hand_out_until_stopped(&h, "stuck", 4).await;
    assert_eq!(handed_out, 4);
    assert_eq!(
        p.max_attempt_count("stuck").await.unwrap(),
        0,
        "queue emptied into dead letters"
    );

    let admin = p.as_management_capability().unwrap();
    let info = admin.get_instance_info("stuck").await.unwrap();
    assert_eq!(info.status, "Failed");
    let history = p.read("stuck").await.unwrap();
    assert!(matches!(
        history.first().map(|e| &e.kind),
        Some(EventKind::OrchestrationStarted { .. })
    ));
    match history.last().map(|e| &e.kind) {
        Some(EventKind::OrchestrationFailed {
            details:
                ErrorDetails::Poison {
                    attempt_count,
                    max_attempts,
                    message_type:
                        PoisonMessageType::Orchestration {
                            instance,
                            execution_id,
                        },
                    ..
                },
        }) => {
            assert_eq!((*attempt_count, *max_attempts), (4, 3));
            assert_eq!((instance.as_str(), *execution_id), ("stuck", 1));
        }
        other => panic!("expected a poison failure, got {other:?}"),
    }
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(
        (letters[0].attempt_count, letters[0].max_attempts),
        (4, Some(3))
    );
    assert_eq!(letters[0].reason, "attempt_ceiling");
    let diags = drain(&mut rx);
    assert!(
        diags
            .iter()
            .any(|d| d.kind == DiagnosticKind::AttemptCeilingEnforced
                && d.instance_id.as_deref() == Some("stuck")
                && d.attempt_count == Some(4))
    );

    // Requeue gives the message a fresh attempt budget; purge empties the store.
    assert!(p.requeue_dead_letter(letters[0].id).await.unwrap());
    assert!(p.get_dead_letter(letters[0].id).await.unwrap().is_none());
    let (_, token, attempt) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(attempt, 1);
    p.abandon_orchestration_item(&token, None, true)
        .await
        .unwrap();
    assert_eq!(p.purge_dead_letters(&Default::default()).await.unwrap(), 0);
    h.drop().await;
}

/// Invariant 6 for the worker queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_attempt_ceiling_dead_letters_and_fails_the_activity() {
    let h = Harness::new("wceiling", |o| o.claim.max_attempts = Some(2)).await;
    let p = &h.provider;
    h.create_instance("o").await;
    p.enqueue_for_worker(WorkItem::ActivityExecute {
        instance: "o".into(),
        execution_id: 1,
        id: 3,
        name: "Crashy".into(),
        input: "{}".into(),
        session_id: None,
        tag: None,
    })
    .await
    .unwrap();
    let mut handed_out = 0;
    while let Some((_, token, attempt)) = p
        .fetch_work_item(LONG, Duration::ZERO, None, &TagFilter::default())
        .await
        .unwrap()
    {
        handed_out += 1;
        assert!(attempt <= 3);
        p.abandon_work_item(&token, None, false).await.unwrap();
    }
    assert_eq!(handed_out, 3);
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].attempt_count, 3);
    let (item, _, _) = h.fetch_only("o").await;
    assert!(matches!(
        &item.messages[..],
        [WorkItem::ActivityFailed {
            details: ErrorDetails::Poison {
                attempt_count: 3,
                max_attempts: 2,
                ..
            },
            ..
        }]
    ));
    h.drop().await;
}

/// The ceiling failure is the runtime's own shape, to the field: the start event the
/// runtime would write for this start, stamped with duroxide's version and the database
/// clock, then the poison failure, and the instance's output is its display message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ceiling_failure_has_the_runtimes_event_shape() {
    let h = Harness::new("ceilshape", |o| o.claim.max_attempts = Some(1)).await;
    let p = &h.provider;
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    p.enqueue_for_orchestrator(start("shape"), None)
        .await
        .unwrap();
    assert_eq!(hand_out_until_stopped(&h, "shape", 2).await.0, 2);
    let history = p.read("shape").await.unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
    let expected_start = started_event("shape");
    assert_eq!(history[0].kind, expected_start.kind);
    let expected = ErrorDetails::Poison {
        attempt_count: 2,
        max_attempts: 1,
        message_type: PoisonMessageType::Orchestration {
            instance: "shape".into(),
            execution_id: 1,
        },
        message: serde_json::to_string(&vec![start("shape")]).unwrap(),
    };
    assert_eq!(
        history[1].kind,
        EventKind::OrchestrationFailed {
            details: expected.clone()
        }
    );
    for (n, e) in history.iter().enumerate() {
        assert_eq!(e.event_id, n as u64 + 1);
        assert_eq!((e.instance_id.as_str(), e.execution_id), ("shape", 1));
        assert_eq!(e.source_event_id, None);
        assert_eq!(e.duroxide_version, event_version());
        assert!(
            e.timestamp_ms + 5_000 >= before && e.timestamp_ms < before + 60_000,
            "timestamp {} against {before}",
            e.timestamp_ms
        );
    }
    let info = p
        .as_management_capability()
        .unwrap()
        .get_instance_info("shape")
        .await
        .unwrap();
    assert_eq!(info.status, "Failed");
    assert_eq!(
        info.output.as_deref(),
        Some(expected.display_message().as_str())
    );
    assert_eq!(
        (
            info.orchestration_name.as_str(),
            info.orchestration_version.as_str()
        ),
        ("Orch", "1.0.0")
    );
    h.drop().await;
}

/// The incident's signature cannot recur: claims whose replies are all lost (every worker
/// dies right after its claim commits, so nothing after the claim statement ever runs),
/// from four connections at once over three instances, never take a count past
/// `max_attempts + 1`; each instance ends failed as poison exactly once. Before the
/// ceiling moved into the claim statement the counts climbed by one per lost claim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_whose_replies_are_lost_never_take_a_count_past_the_ceiling() {
    const MAX: i32 = 2;
    let h = Harness::new("ceillost", |o| o.claim.max_attempts = Some(MAX as u32)).await;
    let p = &h.provider;
    let instances = ["lost-a", "lost-b", "lost-c"];
    for i in instances {
        p.enqueue_for_orchestrator(start(i), None).await.unwrap();
    }
    let pool = sqlx::postgres::PgPoolOptions::new()
        .max_connections(4)
        .connect(&common::database_url())
        .await
        .unwrap();
    let h = std::sync::Arc::new(h);
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let (h, pool) = (h.clone(), pool.clone());
        tasks.push(tokio::spawn(async move {
            let mut claimed = 0;
            for _ in 0..40 {
                if claim_reply_lost(&h, &pool, MAX).await == "claimed" {
                    claimed += 1;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            claimed
        }));
    }
    let mut claimed = 0;
    for t in tasks {
        claimed += t.await.unwrap();
    }
    pool.close().await;
    let h = std::sync::Arc::into_inner(h).unwrap();
    let p = &h.provider;
    // Each instance was handed out exactly max_attempts + 1 times, then stopped.
    assert_eq!(claimed, instances.len() * (MAX as usize + 1));
    for i in instances {
        assert_eq!(highest_attempt(&h, i).await, MAX as u32 + 1, "{i}");
        let history = p.read(i).await.unwrap();
        assert_eq!(failures(&history), 1, "{i}: {history:?}");
        assert_eq!(
            poison_of(history.last().unwrap()).map(|(a, m, _)| (a, m)),
            Some((MAX as u32 + 1, MAX as u32))
        );
    }
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), instances.len());
    assert!(letters.iter().all(|l| l.reason == "attempt_ceiling"
        && l.attempt_count == MAX as u32 + 1
        && l.max_attempts == Some(MAX as u32)));
    assert!(
        p.fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none()
    );
    h.drop().await;
}

/// On by default, at duroxide's default `max_attempts` (10): a provider connected without
/// setting the option hands a message out 11 times, never a 12th.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ceiling_is_on_by_default_at_duroxides_default() {
    let runtime_default = duroxide::runtime::RuntimeOptions::default().max_attempts;
    assert_eq!(
        ProviderOptions::new("postgres://x@localhost/db")
            .claim
            .max_attempts,
        Some(runtime_default)
    );
    assert_eq!(steadfast_pg::DEFAULT_MAX_ATTEMPTS, runtime_default);
    let h = Harness::new("ceildefault", |_| {}).await;
    h.provider
        .enqueue_for_orchestrator(start("default"), None)
        .await
        .unwrap();
    assert_eq!(
        hand_out_until_stopped(&h, "default", runtime_default + 1)
            .await
            .0,
        runtime_default + 1
    );
    let letters = h
        .provider
        .list_dead_letters(&Default::default())
        .await
        .unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].reason, "attempt_ceiling");
    h.drop().await;
}

/// A sub-orchestration stopped at the ceiling fails its parent's call: the parent gets
/// `SubOrchFailed` for the scheduling event and execution named in the child's start, and
/// the child's start event keeps its parent link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_orchestration_stopped_at_the_ceiling_fails_its_parents_call() {
    let h = Harness::new("ceilchild", |o| o.claim.max_attempts = Some(1)).await;
    let p = &h.provider;
    h.create_instance("parent").await;
    p.enqueue_for_orchestrator(
        WorkItem::StartOrchestration {
            instance: "child".into(),
            orchestration: "Child".into(),
            input: "\"in\"".into(),
            version: Some("2.0.0".into()),
            parent_instance: Some("parent".into()),
            parent_id: Some(7),
            parent_execution_id: Some(1),
            execution_id: 1,
        },
        None,
    )
    .await
    .unwrap();
    let (handed_out, parent) = hand_out_until_stopped(&h, "child", 2).await;
    assert_eq!(handed_out, 2);
    let child = p.read("child").await.unwrap();
    match &child[0].kind {
        EventKind::OrchestrationStarted {
            name,
            version,
            input,
            parent_instance,
            parent_id,
            parent_execution_id,
            carry_forward_events,
            ..
        } => {
            assert_eq!(
                (name.as_str(), version.as_str(), input.as_str()),
                ("Child", "2.0.0", "\"in\"")
            );
            assert_eq!(
                (parent_instance.as_deref(), *parent_id, *parent_execution_id),
                (Some("parent"), Some(7), Some(1))
            );
            assert_eq!(*carry_forward_events, None);
        }
        other => panic!("expected the child's start, got {other:?}"),
    }
    let info = p
        .as_management_capability()
        .unwrap()
        .get_instance_info("child")
        .await
        .unwrap();
    assert_eq!(info.parent_instance_id.as_deref(), Some("parent"));
    let (item, token) = parent.expect("the parent's notification");
    match &item.messages[..] {
        [
            WorkItem::SubOrchFailed {
                parent_instance,
                parent_execution_id,
                parent_id,
                details:
                    ErrorDetails::Poison {
                        attempt_count: 2,
                        max_attempts: 1,
                        message_type: PoisonMessageType::Orchestration { instance, .. },
                        ..
                    },
            },
        ] => {
            assert_eq!(
                (parent_instance.as_str(), *parent_execution_id, *parent_id),
                ("parent", 1, 7)
            );
            assert_eq!(instance, "child");
        }
        other => panic!("expected SubOrchFailed, got {other:?}"),
    }
    p.abandon_orchestration_item(&token, None, true)
        .await
        .unwrap();
    h.drop().await;
}

/// The batch of a continue-as-new belongs to the new execution: stopped at the ceiling,
/// that execution (2) fails, with the start event a continue-as-new writes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continue_as_new_stopped_at_the_ceiling_fails_the_new_execution() {
    let h = Harness::new("ceilcan", |o| o.claim.max_attempts = Some(1)).await;
    let p = &h.provider;
    h.create_instance("can").await;
    p.enqueue_for_orchestrator(
        WorkItem::ExternalRaised {
            instance: "can".into(),
            name: "go".into(),
            data: "1".into(),
        },
        None,
    )
    .await
    .unwrap();
    let (_, token, _) = h.fetch_only("can").await;
    p.ack_orchestration_item(
        &token,
        1,
        vec![Event::with_event_id(
            2,
            "can",
            1,
            None,
            EventKind::OrchestrationContinuedAsNew {
                input: "\"next\"".into(),
            },
        )],
        vec![],
        vec![WorkItem::ContinueAsNew {
            instance: "can".into(),
            orchestration: "Orch".into(),
            input: "\"next\"".into(),
            version: Some("1.0.0".into()),
            parent_instance: None,
            parent_id: None,
            parent_execution_id: None,
            carry_forward_events: vec![("k".into(), "v".into())],
            initial_custom_status: Some("carried".into()),
        }],
        ExecutionMetadata {
            status: Some("ContinuedAsNew".into()),
            output: Some("\"next\"".into()),
            ..running_metadata()
        },
        vec![],
    )
    .await
    .unwrap();
    assert_eq!(hand_out_until_stopped(&h, "can", 2).await.0, 2);
    let second = p.read_with_execution("can", 2).await.unwrap();
    assert_eq!(second.len(), 2, "{second:?}");
    assert_eq!(
        second[0].kind,
        EventKind::OrchestrationStarted {
            name: "Orch".into(),
            version: "1.0.0".into(),
            input: "\"next\"".into(),
            parent_instance: None,
            parent_id: None,
            parent_execution_id: None,
            carry_forward_events: Some(vec![("k".into(), "v".into())]),
            initial_custom_status: Some("carried".into()),
        }
    );
    assert!(matches!(
        poison_of(&second[1]),
        Some((
            2,
            1,
            PoisonMessageType::Orchestration {
                execution_id: 2,
                ..
            }
        ))
    ));
    let first = p.read_with_execution("can", 1).await.unwrap();
    assert_eq!(
        failures(&first),
        0,
        "execution 1 stays continued: {first:?}"
    );
    let info = p
        .as_management_capability()
        .unwrap()
        .get_instance_info("can")
        .await
        .unwrap();
    assert_eq!(
        (info.current_execution_id, info.status.as_str()),
        (2, "Failed")
    );
    h.drop().await;
}

/// A message that reaches the ceiling after its execution ended is only dead-lettered:
/// the completed execution keeps its status, output and history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_execution_at_the_ceiling_is_only_dead_lettered() {
    let h = Harness::new("ceilterm", |o| o.claim.max_attempts = Some(1)).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    h.create_instance("done").await;
    p.enqueue_for_orchestrator(
        WorkItem::ExternalRaised {
            instance: "done".into(),
            name: "finish".into(),
            data: "1".into(),
        },
        None,
    )
    .await
    .unwrap();
    let (_, token, _) = h.fetch_only("done").await;
    p.ack_orchestration_item(
        &token,
        1,
        vec![Event::with_event_id(
            2,
            "done",
            1,
            None,
            EventKind::OrchestrationCompleted {
                output: "\"ok\"".into(),
            },
        )],
        vec![],
        vec![],
        ExecutionMetadata {
            status: Some("Completed".into()),
            output: Some("\"ok\"".into()),
            ..running_metadata()
        },
        vec![],
    )
    .await
    .unwrap();
    p.enqueue_for_orchestrator(
        WorkItem::ExternalRaised {
            instance: "done".into(),
            name: "late".into(),
            data: "1".into(),
        },
        None,
    )
    .await
    .unwrap();
    assert_eq!(hand_out_until_stopped(&h, "done", 2).await.0, 2);
    assert_eq!(p.read("done").await.unwrap().len(), 2);
    let info = p
        .as_management_capability()
        .unwrap()
        .get_instance_info("done")
        .await
        .unwrap();
    assert_eq!(
        (info.status.as_str(), info.output.as_deref()),
        ("Completed", Some("\"ok\""))
    );
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(
        (letters[0].reason.as_str(), letters[0].attempt_count),
        ("attempt_ceiling", 2)
    );
    let diags = drain(&mut rx);
    assert!(
        diags
            .iter()
            .any(|d| d.kind == DiagnosticKind::AttemptCeilingEnforced
                && d.instance_id.as_deref() == Some("done")
                && d.reason.contains("already terminal"))
    );
    h.drop().await;
}

/// A ceiling failure the database refuses (a trigger rejects the history insert) cannot
/// stop the queue: the same claim still dead-letters the stopped instance's messages, says
/// so, and goes on to claim ready work. Nor can a refusal of the dead letters too: then
/// the stopped instance is left as it was (still at the ceiling, never handed out).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ceiling_failure_that_errors_still_dead_letters_and_the_claim_goes_on() {
    for refuse_dead_letters in [false, true] {
        // FIFO, so that the claim meets the stopped instance before the ready one.
        let h = Harness::new("ceilerr", |o| {
            o.claim.max_attempts = Some(1);
            o.claim.fanout = 1;
        })
        .await;
        let p = &h.provider;
        let mut rx = p.subscribe();
        p.enqueue_for_orchestrator(start("bad"), None)
            .await
            .unwrap();
        for _ in 0..2 {
            let (_, token, _) = h.fetch_only("bad").await;
            p.abandon_orchestration_item(&token, None, false)
                .await
                .unwrap();
        }
        h.exec(
            "CREATE FUNCTION S.refuse() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION '% refused', TG_TABLE_NAME; END $$",
            None,
        )
        .await;
        for table in ["history", "dead_letters"]
            .into_iter()
            .take(if refuse_dead_letters { 2 } else { 1 })
        {
            h.exec(
                &format!(
                    "CREATE TRIGGER refuse BEFORE INSERT ON S.{table} FOR EACH ROW \
                     WHEN (NEW.instance_id = 'bad') EXECUTE FUNCTION S.refuse()"
                ),
                None,
            )
            .await;
        }
        p.enqueue_for_orchestrator(start("good"), None)
            .await
            .unwrap();
        let (item, token, _) = h.fetch_only("good").await;
        assert_eq!(item.instance, "good");
        h.ack_started("good", &token).await;
        assert_eq!(highest_attempt(&h, "bad").await, 2);
        let letters = p.list_dead_letters(&Default::default()).await.unwrap();
        if refuse_dead_letters {
            assert!(letters.is_empty());
            assert_eq!(
                p.max_attempt_count("bad").await.unwrap(),
                2,
                "left as it was"
            );
        } else {
            assert_eq!(letters.len(), 1);
            assert_eq!(letters[0].instance_id, "bad");
            assert!(
                letters[0]
                    .error
                    .as_deref()
                    .unwrap_or("")
                    .contains("history refused"),
                "{:?}",
                letters[0].error
            );
        }
        let diags = drain(&mut rx);
        assert!(
            diags
                .iter()
                .any(|d| d.kind == DiagnosticKind::AttemptCeilingEnforced
                    && d.instance_id.as_deref() == Some("bad")
                    && d.reason.contains("could not fail")
                    && (!refuse_dead_letters
                        || d.message_kind.as_deref() == Some("error: dead_letters refused"))),
            "{diags:?}"
        );
        h.drop().await;
    }
}
