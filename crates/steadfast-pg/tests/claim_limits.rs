//! Invariant 14, bounded work per claim: the claim scans ready instances, not messages, so
//! no backlog of one instance costs a claim of another anything, and no enqueue racing a
//! claim, an ack or a release loses its instance's place, and no early ready_at that cannot
//! be settled uses up a fetch's tries; one claim hands out at most
//! `claim.max_batch_messages` messages (an unstarted instance's start always among them),
//! and loads at most `claim.max_history_events` events or `claim.max_history_bytes` stored
//! bytes of history; an instance over a history limit is failed once, with a reason naming
//! the limit, and its messages dead-lettered, instead of erroring every claim.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::harness::{Harness, LONG, ack_empty_turn, drain, raised, start};
use duroxide::providers::{Provider, WorkItem};
use duroxide::{ErrorDetails, Event, EventKind};
use steadfast_pg::DiagnosticKind;

fn event_names(messages: &[WorkItem]) -> Vec<String> {
    messages
        .iter()
        .filter_map(|m| match m {
            WorkItem::ExternalRaised { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// Fetch once, ack the turn with nothing written: the names of the events it carried.
async fn take_batch(h: &Harness, instance: &str) -> (Vec<String>, bool) {
    let (item, token, _) = h.fetch_only(instance).await;
    let starts = item
        .messages
        .iter()
        .any(|m| matches!(m, WorkItem::StartOrchestration { .. }));
    let names = event_names(&item.messages);
    if item.history.is_empty() {
        h.ack_started(instance, &token).await;
    } else {
        ack_empty_turn(&h.provider, &token).await;
    }
    (names, starts)
}

fn custom_status_events(
    instance: &str,
    ids: std::ops::RangeInclusive<u64>,
    size: usize,
) -> Vec<Event> {
    ids.map(|id| {
        Event::with_event_id(
            id,
            instance,
            1,
            None,
            EventKind::CustomStatusUpdated {
                status: Some("x".repeat(size)),
            },
        )
    })
    .collect()
}

/// A backlog of 25 events is handed out 10, 10, 5, oldest first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_is_handed_out_in_capped_batches_oldest_first() {
    let h = Harness::new("batch_cap", |o| o.claim.max_batch_messages = Some(10)).await;
    h.create_instance("busy").await;
    for n in 0..25 {
        h.provider
            .enqueue_for_orchestrator(raised("busy", &format!("e{n:02}")), None)
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    for expected in [10, 10, 5] {
        let (names, _) = take_batch(&h, "busy").await;
        assert_eq!(names.len(), expected, "batch {names:?}");
        seen.extend(names);
    }
    let all: Vec<String> = (0..25).map(|n| format!("e{n:02}")).collect();
    assert_eq!(seen, all, "every event once, in order");
    assert!(
        h.provider
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none()
    );
    h.drop().await;
}

/// Events raised before the start fill more than one batch: the first batch still starts
/// the instance, and the rest follow in the next turns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_behind_a_backlog_is_in_the_first_batch() {
    let h = Harness::new("batch_start", |o| o.claim.max_batch_messages = Some(5)).await;
    let p = &h.provider;
    for n in 0..12 {
        p.enqueue_for_orchestrator(raised("late", &format!("e{n:02}")), None)
            .await
            .unwrap();
    }
    p.enqueue_for_orchestrator(start("late"), None)
        .await
        .unwrap();
    let (first, starts) = take_batch(&h, "late").await;
    assert!(starts, "the first batch starts the instance");
    assert_eq!(first.len(), 4);
    let mut seen = first;
    while seen.len() < 12 {
        let (names, starts) = take_batch(&h, "late").await;
        assert!(!starts);
        assert!(!names.is_empty() && names.len() <= 5, "{names:?}");
        seen.extend(names);
    }
    let all: Vec<String> = (0..12).map(|n| format!("e{n:02}")).collect();
    assert_eq!(seen, all);
    h.drop().await;
}

/// A history over `max_history_events` is not handed out: the execution fails with a
/// reason naming the limit, its messages are dead-lettered, the same fetch goes on to a
/// healthy instance, and a later message to the failed instance is only dead-lettered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_over_the_event_limit_fails_once_with_a_reason() {
    let h = Harness::new("history_events", |o| o.claim.max_history_events = Some(50)).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    h.create_instance("fits").await;
    p.append_with_execution("fits", 1, custom_status_events("fits", 2..=50, 10))
        .await
        .unwrap();
    h.create_instance("big").await;
    p.append_with_execution("big", 1, custom_status_events("big", 2..=51, 10))
        .await
        .unwrap();
    h.create_instance("healthy").await;
    for i in ["fits", "big", "healthy"] {
        p.enqueue_for_orchestrator(raised(i, "go"), None)
            .await
            .unwrap();
    }

    let mut handed_out = Vec::new();
    while let Some((item, token, _)) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
    {
        if item.instance == "fits" {
            assert_eq!(item.history.len(), 50, "a history at the limit loads whole");
        }
        handed_out.push(item.instance.clone());
        p.abandon_orchestration_item(&token, Some(Duration::from_secs(60)), false)
            .await
            .unwrap();
    }
    handed_out.sort();
    assert_eq!(handed_out, ["fits", "healthy"]);

    let admin = p.as_management_capability().unwrap();
    let info = admin.get_instance_info("big").await.unwrap();
    assert_eq!(info.status, "Failed");
    let history = p.read("big").await.unwrap();
    assert_eq!(history.len(), 52);
    match &history.last().unwrap().kind {
        EventKind::OrchestrationFailed {
            details:
                ErrorDetails::Infrastructure {
                    operation,
                    message,
                    retryable,
                },
        } => {
            assert_eq!(operation, "load_history");
            assert!(message.contains("claim.max_history_events"), "{message}");
            assert!(!retryable);
        }
        other => panic!("expected an infrastructure failure, got {other:?}"),
    }
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(letters[0].instance_id, "big");
    assert_eq!(letters[0].reason, "history_too_large");
    assert!(
        letters[0]
            .error
            .as_deref()
            .unwrap()
            .contains("more than 50 events"),
        "{:?}",
        letters[0].error
    );
    let diags = drain(&mut rx);
    assert!(
        diags
            .iter()
            .any(|d| d.kind == DiagnosticKind::HistoryTooLarge
                && d.instance_id.as_deref() == Some("big")
                && d.execution_id == Some(1)),
        "{diags:?}"
    );

    // The failed execution's history is still too large: a later message is dead-lettered
    // by the claim, which neither errors nor writes into the ended execution.
    p.enqueue_for_orchestrator(raised("big", "late"), None)
        .await
        .unwrap();
    assert!(
        p.fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(p.read("big").await.unwrap().len(), 52);
    assert_eq!(
        p.list_dead_letters(&Default::default())
            .await
            .unwrap()
            .len(),
        2
    );
    h.drop().await;
}

/// The same for `max_history_bytes`, measured as stored: ten 1000-byte events are over
/// 4 KiB; without the limit the same history loads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_over_the_byte_limit_fails_with_a_reason() {
    for limit in [Some(4096), None] {
        let h = Harness::new("history_bytes", |o| {
            o.claim.max_history_bytes = limit;
        })
        .await;
        let p = &h.provider;
        h.create_instance("wide").await;
        // Random text, so that PostgreSQL's compression cannot shrink it under the limit.
        let events: Vec<Event> = (2..=11u64)
            .map(|id| {
                let status: String = (0..1000)
                    .map(|_| char::from(b'a' + rand::random::<u8>() % 26))
                    .collect();
                Event::with_event_id(
                    id,
                    "wide",
                    1,
                    None,
                    EventKind::CustomStatusUpdated {
                        status: Some(status),
                    },
                )
            })
            .collect();
        p.append_with_execution("wide", 1, events).await.unwrap();
        p.enqueue_for_orchestrator(raised("wide", "go"), None)
            .await
            .unwrap();
        let got = p
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap();
        match limit {
            Some(_) => {
                assert!(got.is_none(), "over the limit: not handed out");
                let admin = p.as_management_capability().unwrap();
                assert_eq!(
                    admin.get_instance_info("wide").await.unwrap().status,
                    "Failed"
                );
                let letters = p.list_dead_letters(&Default::default()).await.unwrap();
                assert!(
                    letters[0]
                        .error
                        .as_deref()
                        .unwrap()
                        .contains("claim.max_history_bytes"),
                    "{:?}",
                    letters[0].error
                );
            }
            None => {
                let (item, _, _) = got.expect("no limit: handed out");
                assert_eq!(item.history.len(), 11);
            }
        }
        h.drop().await;
    }
}

/// A leased instance with 20 000 messages queued behind it, older than all other work:
/// five claims of other instances read a handful of queue rows in all, not the 20 000 per
/// claim that walking past the backlog would take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leased_instances_backlog_costs_other_claims_nothing() {
    let tune = |o: &mut steadfast_pg::ProviderOptions| {
        o.claim.orphan_timeout = Duration::from_secs(86_400)
    };
    let h = Harness::new("backlog", tune).await;
    h.create_instance("busy").await;
    h.provider
        .enqueue_for_orchestrator(raised("busy", "first"), None)
        .await
        .unwrap();
    // Leased for 30 s, and never acked here.
    let (_, _token, _) = h.fetch_only("busy").await;
    h.exec(
        "SELECT S.enqueue_orchestrator(
             array_agg('busy'::text),
             array_agg('{\"ExternalRaised\":{\"instance\":\"busy\",\"name\":\"e' || g
                       || '\",\"data\":\"1\"}}'),
             array_agg(NULL::float8), array_agg(NULL::float8))
         FROM generate_series(1, 20000) AS g",
        None,
    )
    .await;
    for i in 0..5 {
        h.provider
            .enqueue_for_orchestrator(start(&format!("ready-{i}")), None)
            .await
            .unwrap();
    }
    h.assert_five_cheap_claims_of_ready_work(tune).await;
    h.drop().await;
}

/// Enqueues racing claims, acks and releases of the same few instances never lose an
/// instance's place in the scan: in each of 40 rounds four clients raise an event to each
/// of four instances at once, while four dispatchers claim and ack them; every round's
/// events are all handed out, once (the last message to an instance is the one a lost
/// place would strand). Each enqueue's transaction stays open a few milliseconds after
/// it, as an ack that sends an event to another instance does while it writes the rest of
/// its turn: the window in which a release could settle ready_at past the message.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn enqueues_racing_claims_and_acks_lose_no_instance() {
    const INSTANCES: usize = 4;
    const CLIENTS: usize = 4;
    const ROUNDS: usize = 40;
    let h = Harness::new("ready_race", |o| o.max_connections = 24).await;
    for i in 0..INSTANCES {
        h.create_instance(&format!("i{i}")).await;
    }
    let p = h.provider.clone();
    let seen = Arc::new(std::sync::Mutex::new(HashMap::<String, usize>::new()));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut dispatchers = Vec::new();
    for _ in 0..4 {
        let (p, seen, done) = (p.clone(), seen.clone(), done.clone());
        dispatchers.push(tokio::spawn(async move {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let Some((item, token, _)) = p
                    .fetch_orchestration_item(LONG, Duration::from_millis(20), None)
                    .await
                    .unwrap()
                else {
                    continue;
                };
                {
                    let mut seen = seen.lock().unwrap();
                    for name in event_names(&item.messages) {
                        *seen.entry(name).or_default() += 1;
                    }
                }
                ack_empty_turn(&p, &token).await;
            }
        }));
    }
    let enqueue = h.sql("SELECT S.enqueue_orchestrator($1, $2, $3, $4)");
    let mut stranded = None;
    for round in 0..ROUNDS {
        let mut clients = Vec::new();
        for c in 0..CLIENTS {
            for i in 0..INSTANCES {
                let (p, enqueue) = (p.clone(), enqueue.clone());
                clients.push(tokio::spawn(async move {
                    let item = raised(&format!("i{i}"), &format!("r{round}-c{c}-i{i}"));
                    let mut tx = p.pool().begin().await.unwrap();
                    sqlx::query(&enqueue)
                        .persistent(false)
                        .bind(vec![format!("i{i}")])
                        .bind(vec![serde_json::to_string(&item).unwrap()])
                        .bind(vec![None::<f64>])
                        .bind(vec![None::<f64>])
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                    tokio::time::sleep(Duration::from_millis(((c + i + round) % 4) as u64 * 2))
                        .await;
                    tx.commit().await.unwrap();
                }));
            }
        }
        for c in clients {
            c.await.unwrap();
        }
        let expected = (round + 1) * CLIENTS * INSTANCES;
        let deadline = Instant::now() + Duration::from_secs(10);
        while seen.lock().unwrap().len() < expected && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if seen.lock().unwrap().len() < expected {
            stranded = Some(round);
            break;
        }
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    for d in dispatchers {
        d.await.unwrap();
    }
    let seen = seen.lock().unwrap().clone();
    let left = h
        .sql_f64(
            "SELECT count(*)::float8 FROM S.orchestrator_queue WHERE instance_id LIKE $1",
            "i%",
        )
        .await;
    assert_eq!(
        stranded,
        None,
        "events stranded in that round: {} handed out in all, {left} still queued",
        seen.len()
    );
    assert!(seen.values().all(|&n| n == 1), "an event handed out twice");
    assert_eq!(left, 0.0);
    h.drop().await;
}

/// ready_at may be early (invariant 14), and a try that finds nothing cannot settle it while
/// an enqueue holds its fence: 100 started instances with nothing to run, whose early
/// ready_at is older than any other work and whose fence is held shared (as in-flight
/// enqueues of delayed messages hold it, functions/ready_at_fence_key.sql), are more than a
/// fetch's try budget and its candidate scan.
/// A fetch still reaches the one ready instance behind them: empty tries are not counted,
/// and a re-read of the candidates passes over the instances this fetch already found
/// empty. Once the holds end, the next fetch settles them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_reaches_ready_work_behind_early_ready_rows_it_cannot_settle() {
    const EARLY: usize = 100;
    let h = Harness::new("early_ready", |_| {}).await;
    for i in 0..EARLY {
        h.create_instance(&format!("early-{i:03}")).await;
    }
    h.exec(
        "UPDATE S.instance_leases SET ready_at = clock_timestamp() - interval '1 hour'
         WHERE instance_id LIKE 'early-%'",
        None,
    )
    .await;
    let enqueues = h
        .hold(
            "SELECT pg_advisory_xact_lock_shared(S.ready_at_fence_key(instance_id))
             FROM S.instance_leases WHERE instance_id LIKE 'early-%'",
        )
        .await;
    h.provider
        .enqueue_for_orchestrator(start("ready-0"), None)
        .await
        .unwrap();

    let got = h
        .provider
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .map(|g| g.0.instance);
    assert_eq!(
        got.as_deref(),
        Some("ready-0"),
        "the ready instance behind the early rows"
    );

    enqueues.commit().await.unwrap();
    let got = h
        .provider
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap();
    assert!(got.is_none(), "nothing else is ready");
    let early = h
        .sql_f64(
            "SELECT count(*)::float8 FROM S.instance_leases
             WHERE instance_id LIKE $1 AND ready_at IS NOT NULL",
            "early-%",
        )
        .await;
    assert_eq!(
        early, 0.0,
        "the early rows are settled once nothing holds them"
    );
    h.drop().await;
}
