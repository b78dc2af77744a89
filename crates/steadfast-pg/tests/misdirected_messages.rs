//! Messages to instances that are not running cannot stop the queue: they are never claim
//! candidates, so no number, age or target of them keeps a fetch from ready work; they
//! wait `orphan_timeout` for a start and then move to the dead-letter table as
//! `orphaned`. Every test runs against a real PostgreSQL; each failed before the claim
//! considered only runnable instances (the first two with `ClaimExhausted` and `None`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::harness::{Harness, LONG, drain, start};
use duroxide::providers::{ExecutionMetadata, Provider, ProviderAdmin, WorkItem};
use steadfast_pg::{DeadLetterFilter, DiagnosticKind, PollingMode, PostgresProvider};

fn raised(instance: &str) -> WorkItem {
    WorkItem::ExternalRaised {
        instance: instance.into(),
        name: "Approved".into(),
        data: "{}".into(),
    }
}

fn persistent(instance: &str) -> WorkItem {
    WorkItem::QueueMessage {
        instance: instance.into(),
        name: "Config".into(),
        data: "{}".into(),
    }
}

fn completed(instance: &str) -> WorkItem {
    WorkItem::ActivityCompleted {
        instance: instance.into(),
        execution_id: 1,
        id: 2,
        result: "1".into(),
    }
}

/// `per_kind` messages of each misdirected kind, each to its own never-started id, all
/// older than any ready work.
async fn misdirect(p: &PostgresProvider, per_kind: usize) {
    for i in 0..per_kind {
        for item in [
            raised(&format!("ghost-e{i}")),
            persistent(&format!("ghost-q{i}")),
            completed(&format!("ghost-c{i}")),
        ] {
            p.enqueue_for_orchestrator(item, None).await.unwrap();
        }
    }
}

async fn fetch_now(p: &PostgresProvider) -> Option<(String, Vec<WorkItem>, String)> {
    p.fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .map(|(item, token, _)| (item.instance, item.messages, token))
}

/// Fetch until something is claimed; `what` names it when 20 s pass without.
async fn fetch_eventually(p: &PostgresProvider, what: &str) -> (String, Vec<WorkItem>, String) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(got) = fetch_now(p).await {
            return got;
        }
        assert!(Instant::now() < deadline, "{what} was never claimed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn queued_for(h: &Harness, instance: &str) -> i64 {
    h.sql_f64(
        "SELECT count(*)::float8 FROM S.orchestrator_queue WHERE instance_id = $1",
        instance,
    )
    .await as i64
}

async fn orphaned_letters(p: &PostgresProvider, instance: &str) -> Vec<steadfast_pg::DeadLetter> {
    let filter = DeadLetterFilter {
        instance_id: Some(instance.into()),
        ..Default::default()
    };
    p.list_dead_letters(&filter)
        .await
        .unwrap()
        .into_iter()
        .filter(|d| d.reason == "orphaned")
        .collect()
}

/// With the default claim bounds (fan-out 8, 8 tries per fetch), 600 messages to 600
/// never-started ids ahead of ten ready starts: every fetch returns ready work at once.
async fn misdirected_messages_never_cost_a_claim(polling: PollingMode) {
    let h = Harness::with_polling("misdirected", polling, |_| {}).await;
    let p = &h.provider;
    misdirect(p, 200).await;
    for i in 0..10 {
        p.enqueue_for_orchestrator(start(&format!("ready-{i}")), None)
            .await
            .unwrap();
    }
    let mut rx = p.subscribe();
    let mut got = HashSet::new();
    for _ in 0..10 {
        let (instance, messages, _token) = fetch_now(p)
            .await
            .expect("a fetch returned nothing while ready work was queued");
        assert!(instance.starts_with("ready-"), "claimed {instance}");
        assert_eq!(messages.len(), 1);
        got.insert(instance);
    }
    assert_eq!(got.len(), 10);
    assert!(
        fetch_now(p).await.is_none(),
        "only misdirected messages are left"
    );
    let exhausted: Vec<_> = drain(&mut rx)
        .into_iter()
        .filter(|d| d.kind == DiagnosticKind::ClaimExhausted)
        .collect();
    assert!(exhausted.is_empty(), "{exhausted:?}");
    // Nothing was dropped or counted: they wait for a start.
    assert_eq!(queued_for(&h, "ghost-e0").await, 1);
    assert_eq!(
        h.sql_f64(
            "SELECT max(attempt_count)::float8 FROM S.orchestrator_queue WHERE instance_id LIKE $1",
            "ghost-%"
        )
        .await,
        0.0
    );
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misdirected_messages_never_cost_a_claim_listen() {
    misdirected_messages_never_cost_a_claim(PollingMode::Listen).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misdirected_messages_never_cost_a_claim_session_free() {
    misdirected_messages_never_cost_a_claim(PollingMode::SessionFree).await;
}

/// 24 concurrent fetchers, 1 500 misdirected messages, 24 ready instances: each ready
/// instance is claimed exactly once, and fetches go on finding them until none is left.
/// (A fetcher of this herd may still use up its tries losing races to the others, as
/// invariant 4 allows; the single-fetcher tests above show misdirected messages cost none.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_fetchers_reach_ready_work_behind_a_flood_of_misdirected_messages() {
    let h = Harness::new("misdirected_herd", |o| o.max_connections = 30).await;
    let p = &h.provider;
    misdirect(p, 500).await;
    for i in 0..24 {
        p.enqueue_for_orchestrator(start(&format!("ready-{i}")), None)
            .await
            .unwrap();
    }
    let fetchers: Vec<_> = (0..24)
        .map(|_| {
            let p = Arc::clone(p);
            tokio::spawn(async move { fetch_now(&p).await.map(|(i, _, _)| i) })
        })
        .collect();
    let mut got = Vec::new();
    for f in fetchers {
        got.extend(f.await.unwrap());
    }
    // Late fetchers may find every ready instance already taken; what they must not do
    // is stop while one is still unclaimed.
    while let Some((instance, _, _)) = fetch_now(p).await {
        got.push(instance);
    }
    let distinct: HashSet<_> = got.iter().cloned().collect();
    assert_eq!(got.len(), 24, "{got:?}");
    assert_eq!(distinct.len(), 24);
    assert!(distinct.iter().all(|i| i.starts_with("ready-")), "{got:?}");
    h.drop().await;
}

/// An event raised before its instance's start waits, then arrives in the start's batch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_raised_before_the_start_is_delivered_with_it() {
    let h = Harness::new("event_first", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(raised("late-start"), None)
        .await
        .unwrap();
    assert!(fetch_now(p).await.is_none());
    p.enqueue_for_orchestrator(start("late-start"), None)
        .await
        .unwrap();
    let (instance, messages, _) = fetch_now(p).await.expect("the started instance");
    assert_eq!(instance, "late-start");
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(matches!(messages[0], WorkItem::ExternalRaised { .. }));
    assert!(matches!(messages[1], WorkItem::StartOrchestration { .. }));
    h.drop().await;
}

/// Events to an instance whose start is delayed are not candidates until the start is
/// visible; ready work behind them is claimed meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_before_a_delayed_start_wait_for_it() {
    let h = Harness::new("delayed_start", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("later"), Some(Duration::from_millis(1500)))
        .await
        .unwrap();
    let began = Instant::now();
    for _ in 0..20 {
        p.enqueue_for_orchestrator(raised("later"), None)
            .await
            .unwrap();
    }
    p.enqueue_for_orchestrator(start("now"), None)
        .await
        .unwrap();
    let (instance, _, _) = fetch_now(p).await.expect("the ready instance");
    assert_eq!(instance, "now");
    if began.elapsed() < Duration::from_millis(1200) {
        assert!(
            fetch_now(p).await.is_none(),
            "the delayed start is not due yet"
        );
    }
    tokio::time::sleep(Duration::from_millis(1600).saturating_sub(began.elapsed())).await;
    let (instance, messages, _) = fetch_now(p).await.expect("the started instance");
    assert_eq!(instance, "later");
    assert_eq!(messages.len(), 21);
    h.drop().await;
}

/// Past `orphan_timeout`, messages to a never-started id and to a deleted instance move to
/// the dead-letter table with reason `orphaned` and a diagnostic each; before it they
/// stay queued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misdirected_messages_are_dead_lettered_as_orphaned_after_the_timeout() {
    let timeout = Duration::from_millis(1500);
    let h = Harness::new("orphaned", |o| o.claim.orphan_timeout = timeout).await;
    let p = &h.provider;
    let mut rx = p.subscribe();
    h.create_instance("deleted").await;
    p.delete_instance("deleted", true).await.unwrap();
    let began = Instant::now();
    for item in [raised("ghost"), persistent("ghost"), completed("ghost")] {
        p.enqueue_for_orchestrator(item, None).await.unwrap();
    }
    p.enqueue_for_orchestrator(completed("deleted"), None)
        .await
        .unwrap();
    assert!(fetch_now(p).await.is_none());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(fetch_now(p).await.is_none());
    if began.elapsed() < Duration::from_millis(1200) {
        assert_eq!(queued_for(&h, "ghost").await, 3, "dead-lettered too early");
        assert!(orphaned_letters(p, "ghost").await.is_empty());
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while orphaned_letters(p, "ghost").await.len() < 3
        || orphaned_letters(p, "deleted").await.is_empty()
    {
        assert!(Instant::now() < deadline, "orphans never dead-lettered");
        let _ = fetch_now(p).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(began.elapsed() >= timeout);
    let ghost = orphaned_letters(p, "ghost").await;
    assert_eq!(ghost.len(), 3);
    assert!(ghost.iter().all(|d| d.attempt_count == 0));
    assert_eq!(queued_for(&h, "ghost").await, 0);
    assert_eq!(queued_for(&h, "deleted").await, 0);
    let leases = h
        .sql_f64(
            "SELECT count(*)::float8 FROM S.instance_leases WHERE instance_id = $1",
            "ghost",
        )
        .await;
    assert_eq!(leases, 0.0, "an emptied waiting lease row is removed");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let orphaned: Vec<_> = drain(&mut rx)
        .into_iter()
        .filter(|d| d.kind == DiagnosticKind::MessagesOrphaned)
        .collect();
    let ghost_diag = orphaned
        .iter()
        .find(|d| d.instance_id.as_deref() == Some("ghost"))
        .expect("a diagnostic for ghost");
    let kinds = ghost_diag.message_kind.as_deref().unwrap_or("");
    for kind in ["ExternalRaised", "QueueMessage", "ActivityCompleted"] {
        assert!(kinds.contains(kind), "{kinds}");
    }
    assert!(
        ghost_diag.reason.starts_with("3 message(s)"),
        "{}",
        ghost_diag.reason
    );
    assert!(
        orphaned
            .iter()
            .any(|d| d.instance_id.as_deref() == Some("deleted"))
    );
    h.drop().await;
}

/// A start acked without writing anything leaves an instance that is runnable but never
/// started: its next message costs one claim try, once, and then waits like any orphan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_whose_start_left_nothing_costs_one_try_once() {
    let h = Harness::new("start_left_nothing", |o| o.claim.max_claim_attempts = 1).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("hollow"), None)
        .await
        .unwrap();
    let (_, _, token) = fetch_now(p).await.expect("the start");
    p.ack_orchestration_item(
        &token,
        1,
        vec![],
        vec![],
        vec![],
        ExecutionMetadata::default(),
        vec![],
    )
    .await
    .unwrap();
    p.enqueue_for_orchestrator(raised("hollow"), None)
        .await
        .unwrap();
    p.enqueue_for_orchestrator(start("ready"), None)
        .await
        .unwrap();
    // One try per fetch: the first may go to `hollow` and park it; after that, `ready`.
    let mut got = None;
    for _ in 0..2 {
        if let Some((instance, _, _)) = fetch_now(p).await {
            got = Some(instance);
            break;
        }
    }
    assert_eq!(got.as_deref(), Some("ready"));
    assert!(fetch_now(p).await.is_none());
    assert!(fetch_now(p).await.is_none());
    assert_eq!(queued_for(&h, "hollow").await, 1, "parked, not dropped");
    // A new start brings it back.
    p.enqueue_for_orchestrator(start("hollow"), None)
        .await
        .unwrap();
    let (instance, messages, token) = fetch_now(p).await.expect("restarted");
    assert_eq!(instance, "hollow");
    assert_eq!(messages.len(), 2);
    h.ack_started("hollow", &token).await;
    h.drop().await;
}

/// Messages to never-started instances are stored as waiting, outside the claim's ready
/// index: with 5 000 of them ahead of the ready work, five claims read a handful of queue
/// rows in all, not the 5 000 per claim that walking past them would take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_messages_are_outside_the_claims_scan() {
    // The orphan sweep (due 30 s after a provider starts at this timeout) stays out of it.
    let tune = |o: &mut steadfast_pg::ProviderOptions| {
        o.claim.orphan_timeout = Duration::from_secs(86_400)
    };
    let h = Harness::new("waiting_outside_scan", tune).await;
    h.exec(
        "SELECT S.enqueue_orchestrator(
             array_agg('ghost-' || g),
             array_agg('{\"ExternalRaised\":{\"instance\":\"ghost-' || g
                       || '\",\"name\":\"e\",\"data\":\"1\"}}'),
             array_agg(NULL::float8), array_agg(NULL::float8))
         FROM generate_series(1, 5000) AS g",
        None,
    )
    .await;
    for i in 0..5 {
        h.provider
            .enqueue_for_orchestrator(start(&format!("ready-{i}")), None)
            .await
            .unwrap();
    }
    let waiting = h
        .sql_f64(
            "SELECT count(*)::float8 FROM S.orchestrator_queue WHERE waiting AND instance_id LIKE $1",
            "ghost-%",
        )
        .await;
    assert_eq!(waiting, 5000.0);
    h.assert_five_cheap_claims_of_ready_work(tune).await;
    h.drop().await;
}

/// A waiting message whose instance became runnable without taking it along (its start
/// was committed, claimed and acked while the message's enqueue ran) is made ready by the
/// sweep, not left waiting forever. The race's outcome is set up directly: a started
/// instance with an event stored as waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_message_of_an_instance_that_became_runnable_is_made_ready() {
    let h = Harness::new("waiting_readied", |o| {
        o.claim.orphan_timeout = Duration::from_millis(400)
    })
    .await;
    let p = &h.provider;
    h.create_instance("raced").await;
    p.enqueue_for_orchestrator(raised("raced"), None)
        .await
        .unwrap();
    h.exec(
        "UPDATE S.orchestrator_queue SET waiting = true WHERE instance_id = $1",
        Some("raced"),
    )
    .await;
    let claimed = fetch_eventually(p, "the waiting message").await;
    assert_eq!(claimed.0, "raced");
    assert_eq!(claimed.1.len(), 1);
    assert!(orphaned_letters(p, "raced").await.is_empty());
    h.drop().await;
}

/// A start stored as waiting with no lease row (an enqueue that raced a deletion of the
/// instance's lease row) is classified again by the sweep and claimed, not dead-lettered
/// as an orphan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_start_without_a_lease_row_is_claimed_not_orphaned() {
    let h = Harness::new("leaseless_start", |o| {
        o.claim.orphan_timeout = Duration::from_millis(400)
    })
    .await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("leaseless"), None)
        .await
        .unwrap();
    h.exec(
        "DELETE FROM S.instance_leases WHERE instance_id = $1",
        Some("leaseless"),
    )
    .await;
    h.exec(
        "UPDATE S.orchestrator_queue SET waiting = true WHERE instance_id = $1",
        Some("leaseless"),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let claimed = fetch_eventually(p, "the start").await;
    assert_eq!(claimed.0, "leaseless");
    assert!(orphaned_letters(p, "leaseless").await.is_empty());
    h.drop().await;
}

/// Messages the sweep can do nothing about yet (1 100 events ahead of a start due in an
/// hour) do not clog it: a waiting message behind them whose instance is runnable is still
/// made ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_messages_the_sweep_cannot_act_on_do_not_hold_it_up() {
    let h = Harness::new("sweep_not_clogged", |o| {
        o.claim.orphan_timeout = Duration::from_millis(400)
    })
    .await;
    let p = &h.provider;
    h.create_instance("raced").await;
    p.enqueue_for_orchestrator(start("later"), Some(Duration::from_secs(3600)))
        .await
        .unwrap();
    h.exec(
        "SELECT S.enqueue_orchestrator(
             array_agg('later'::text),
             array_agg('{\"ExternalRaised\":{\"instance\":\"later\",\"name\":\"e\",\"data\":\"' || g || '\"}}'),
             array_agg(NULL::float8), array_agg(NULL::float8))
         FROM generate_series(1, 1100) AS g",
        None,
    )
    .await;
    p.enqueue_for_orchestrator(raised("raced"), None)
        .await
        .unwrap();
    h.exec(
        "UPDATE S.orchestrator_queue SET waiting = true WHERE instance_id = $1",
        Some("raced"),
    )
    .await;
    let claimed =
        fetch_eventually(p, "the waiting message behind the delayed start's events").await;
    assert_eq!(claimed.0, "raced");
    assert_eq!(
        queued_for(&h, "later").await,
        1101,
        "the delayed start and its events stay queued"
    );
    h.drop().await;
}
