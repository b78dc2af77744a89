//! An activity that a turn schedules while a worker fetch of the same process waits is
//! handed to that fetch by the ack's own write (src/handoff.rs): no claim statement runs,
//! the item is stored claimed with the fetch's lease and its first attempt counted, and it
//! acks like a claimed item. Only what the fetch's tag filter takes is handed to it (the
//! same items its claim would take), a refused ack leaves its reserved fetch claiming as
//! usual, a hung ack does not hold its reserved fetch past the fetch's poll timeout, and
//! the item stored for a reserved fetch that was cancelled is given back. Every test runs
//! in both polling modes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod common;

use std::collections::HashSet;
use std::time::Duration;

use common::claim_counts::{SERIAL, claims};
use common::harness::{Harness, LONG, activity_item, running_metadata, start, started_event};
use common::long_poll::{POLL, PROMPT, slow_recheck};
use duroxide::providers::{Provider, ScheduledActivityIdentifier, TagFilter, WorkItem};
use steadfast_pg::{PollingMode, PostgresProvider};
use tokio::task::JoinHandle;
use tokio::time::Instant;

type Fetched = Option<(WorkItem, String, u32)>;

// Each test below runs in both polling modes: `SessionFree` fetches wait and are handed
// activities as `Listen` ones are (through PgBouncer when STEADFAST_TEST_PGBOUNCER_URL is
// set).
in_both_modes!(
    an_activity_scheduled_while_a_worker_fetch_waits_is_handed_to_it_without_a_claim,
    a_waiting_fetch_is_handed_only_what_its_tag_filter_takes,
    a_refused_ack_leaves_its_reserved_fetch_claiming,
    an_activity_its_own_turn_cancels_is_not_handed_out,
    a_hung_ack_does_not_hold_its_reserved_fetch_past_its_poll_timeout,
    a_hand_off_takes_exactly_what_a_claim_with_the_same_filter_takes,
    a_cancelled_reserved_fetch_gives_its_item_back,
);

/// A worker fetch with `filter`, started and left waiting (its claim found nothing).
async fn waiting_fetch(h: &Harness, filter: TagFilter) -> JoinHandle<Fetched> {
    h.waiting_worker_fetch(None, filter, POLL).await
}

/// A claimed start of `instance`: its lock token.
async fn claimed_start(h: &Harness, instance: &str, lock: Duration) -> String {
    h.provider
        .enqueue_for_orchestrator(start(instance), None)
        .await
        .unwrap();
    let (item, token, _) = h
        .provider
        .fetch_orchestration_item(lock, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("the start");
    assert_eq!(item.instance, instance);
    token
}

/// Ack the start's turn: the instance starts and schedules `activities`.
async fn ack_scheduling(
    provider: &PostgresProvider,
    instance: &str,
    token: &str,
    activities: Vec<WorkItem>,
) -> Result<(), duroxide::providers::ProviderError> {
    ack_scheduling_cancelling(provider, instance, token, activities, vec![]).await
}

/// Ack the start's turn: the instance starts, schedules `activities` and cancels
/// `cancelled`.
async fn ack_scheduling_cancelling(
    provider: &PostgresProvider,
    instance: &str,
    token: &str,
    activities: Vec<WorkItem>,
    cancelled: Vec<ScheduledActivityIdentifier>,
) -> Result<(), duroxide::providers::ProviderError> {
    provider
        .ack_orchestration_item(
            token,
            1,
            vec![started_event(instance)],
            activities,
            vec![],
            running_metadata(),
            cancelled,
        )
        .await
}

fn tagged(instance: &str, id: u64, tag: &str) -> WorkItem {
    let WorkItem::ActivityExecute {
        instance,
        execution_id,
        id,
        name,
        input,
        session_id,
        ..
    } = activity_item(instance, id)
    else {
        unreachable!()
    };
    WorkItem::ActivityExecute {
        instance,
        execution_id,
        id,
        name,
        input,
        session_id,
        tag: Some(tag.into()),
    }
}

/// The stored lock token and attempt count of `instance`'s activity `id`, and whether its
/// lease is live.
async fn stored_lease(h: &Harness, instance: &str, id: i64) -> (Option<String>, i32, bool) {
    let admin = common::admin_pool().await;
    let row: (Option<String>, i32, bool) = sqlx::query_as(&h.sql(
        "SELECT lock_token, attempt_count, COALESCE(locked_until > clock_timestamp(), false) \
         FROM S.worker_queue WHERE instance_id = $1 AND activity_id = $2",
    ))
    .bind(instance)
    .bind(id)
    .fetch_one(&admin)
    .await
    .unwrap();
    admin.close().await;
    row
}

/// The item and attempt a claim takes within `PROMPT` (short fetches, retried) once an
/// item nobody received was given back, long before its lease would end; claimed, not
/// handed. Reads the claim counters: hold `SERIAL`.
async fn claimed_after_give_back(h: &Harness) -> (WorkItem, u32) {
    let claims_before = claims("worker");
    let mut fetched = None;
    let until = Instant::now() + PROMPT;
    while fetched.is_none() && Instant::now() < until {
        fetched = h
            .provider
            .fetch_work_item(
                LONG,
                Duration::from_millis(200),
                None,
                &TagFilter::DefaultOnly,
            )
            .await
            .unwrap();
    }
    let (item, _, attempts) = fetched.expect("the activity, given back");
    assert!(claims("worker") > claims_before, "claimed, not handed");
    (item, attempts)
}

/// Rows in the worker queue.
async fn stored_items(h: &Harness) -> i64 {
    let admin = common::admin_pool().await;
    let stored = sqlx::query_scalar(&h.sql("SELECT count(*) FROM S.worker_queue"))
        .fetch_one(&admin)
        .await
        .unwrap();
    admin.close().await;
    stored
}

async fn an_activity_scheduled_while_a_worker_fetch_waits_is_handed_to_it_without_a_claim(
    polling: PollingMode,
) {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("handoff", polling, slow_recheck).await;
    let token = claimed_start(&h, "h1", LONG).await;
    let fetch = waiting_fetch(&h, TagFilter::DefaultOnly).await;
    let claims_before = claims("worker");

    let acked = Instant::now();
    ack_scheduling(&h.provider, "h1", &token, vec![activity_item("h1", 2)])
        .await
        .unwrap();
    let (item, work_token, attempts) = fetch.await.unwrap().expect("the activity");
    assert!(acked.elapsed() < PROMPT, "handed at once");
    assert_eq!(item, activity_item("h1", 2));
    assert_eq!(attempts, 1, "its first attempt");
    assert_eq!(claims("worker") - claims_before, 0, "claims run");
    assert_eq!(
        stored_lease(&h, "h1", 2).await,
        (Some(work_token.clone()), 1, true),
        "stored claimed, with the handed token and the attempt counted"
    );

    let completion = WorkItem::ActivityCompleted {
        instance: "h1".into(),
        execution_id: 1,
        id: 2,
        result: "1".into(),
    };
    h.provider
        .ack_work_item(&work_token, Some(completion.clone()))
        .await
        .unwrap();
    let (next, _, _) = h.fetch_only("h1").await;
    assert_eq!(next.messages, vec![completion]);
    h.drop().await;
}

async fn a_waiting_fetch_is_handed_only_what_its_tag_filter_takes(polling: PollingMode) {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("handoff_tags", polling, slow_recheck).await;
    let token = claimed_start(&h, "h2", LONG).await;
    let gpu = waiting_fetch(&h, TagFilter::Tags(HashSet::from(["gpu".to_string()]))).await;
    let claims_before = claims("worker");

    let untagged = activity_item("h2", 2);
    let on_gpu = tagged("h2", 3, "gpu");
    ack_scheduling(&h.provider, "h2", &token, vec![untagged, on_gpu.clone()])
        .await
        .unwrap();
    let (item, work_token, attempts) = gpu.await.unwrap().expect("the gpu activity");
    assert_eq!((item, attempts), (on_gpu, 1));
    assert_eq!(claims("worker") - claims_before, 0, "claims run");
    assert_eq!(stored_lease(&h, "h2", 3).await.0, Some(work_token));
    assert_eq!(
        stored_lease(&h, "h2", 2).await,
        (None, 0, false),
        "the untagged activity is left to the claims"
    );
    h.drop().await;
}

async fn a_refused_ack_leaves_its_reserved_fetch_claiming(polling: PollingMode) {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("handoff_refused", polling, slow_recheck).await;
    let lock = Duration::from_millis(500);
    let token = claimed_start(&h, "h3", lock).await;
    let fetch = waiting_fetch(&h, TagFilter::DefaultOnly).await;
    tokio::time::sleep(lock + Duration::from_millis(300)).await;

    let refused = ack_scheduling(&h.provider, "h3", &token, vec![activity_item("h3", 2)]).await;
    assert!(refused.is_err(), "the lease ran out: the ack is refused");
    let stored = stored_items(&h).await;
    assert_eq!(stored, 0, "a refused ack writes no activity");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !fetch.is_finished(),
        "the reserved fetch claimed and waits again"
    );

    let claims_before = claims("worker");
    let enqueued = Instant::now();
    h.provider
        .enqueue_for_worker(activity_item("h3", 9))
        .await
        .unwrap();
    let (item, _, attempts) = fetch.await.unwrap().expect("the enqueued activity");
    assert!(enqueued.elapsed() < PROMPT, "woken by the enqueue");
    assert_eq!((item, attempts), (activity_item("h3", 9), 1));
    assert_eq!(claims("worker") - claims_before, 1, "claimed, not handed");
    h.drop().await;
}

async fn an_activity_its_own_turn_cancels_is_not_handed_out(polling: PollingMode) {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("handoff_cancelled", polling, slow_recheck).await;
    let token = claimed_start(&h, "h4", LONG).await;
    let fetch = waiting_fetch(&h, TagFilter::DefaultOnly).await;

    let cancelled = ScheduledActivityIdentifier {
        instance: "h4".into(),
        execution_id: 1,
        activity_id: 2,
    };
    ack_scheduling_cancelling(
        &h.provider,
        "h4",
        &token,
        vec![activity_item("h4", 2), activity_item("h4", 3)],
        vec![cancelled],
    )
    .await
    .unwrap();
    let (item, work_token, _) = fetch.await.unwrap().expect("an activity");
    assert_eq!(
        item,
        activity_item("h4", 3),
        "the activity that was not cancelled"
    );
    assert_eq!(stored_lease(&h, "h4", 3).await.0, Some(work_token));
    let stored = stored_items(&h).await;
    assert_eq!(stored, 1, "the cancelled activity is gone");
    h.drop().await;
}

async fn a_hung_ack_does_not_hold_its_reserved_fetch_past_its_poll_timeout(polling: PollingMode) {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("handoff_hung", polling, slow_recheck).await;
    let token = claimed_start(&h, "h5", LONG).await;
    let poll = Duration::from_secs(1);
    let fetch = h
        .waiting_worker_fetch(None, TagFilter::DefaultOnly, poll)
        .await;

    // Another session holds the instance's lease row: the ack waits for it (retrying its
    // lock timeouts while the lease lives), after it reserved the waiting fetch.
    let holder = h
        .hold("SELECT 1 FROM S.instance_leases WHERE instance_id = 'h5' FOR UPDATE")
        .await;
    let provider = h.provider.clone();
    let ack = tokio::spawn(async move {
        ack_scheduling(&provider, "h5", &token, vec![activity_item("h5", 2)]).await
    });

    let until = Instant::now() + PROMPT;
    while !fetch.is_finished() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        fetch.is_finished(),
        "the reserved fetch returned at its poll timeout, not when the ack ends"
    );
    assert!(!ack.is_finished(), "the ack still waits for the lease row");
    assert!(fetch.await.unwrap().is_none(), "it returned empty");

    // The rest of the queue moves on while the ack hangs: other work is claimed at once.
    h.provider
        .enqueue_for_worker(activity_item("other", 1))
        .await
        .unwrap();
    let (other, _, attempts) = h
        .provider
        .fetch_work_item(LONG, PROMPT, None, &TagFilter::DefaultOnly)
        .await
        .unwrap()
        .expect("other work, while the ack hangs");
    assert_eq!((other, attempts), (activity_item("other", 1), 1));
    assert!(!ack.is_finished(), "the ack still waits for the lease row");

    holder.rollback().await.unwrap();
    ack.await.unwrap().unwrap();
    // The item the ack stored for the fetch that left is given back, first attempt
    // returned, and a claim takes it.
    assert_eq!(
        claimed_after_give_back(&h).await,
        (activity_item("h5", 2), 1)
    );
    h.drop().await;
}

/// The tags of the items a fetch with `filter` takes, by claim and by hand-off: the two
/// must agree (the claim's rule is `claim_work_item.sql`'s, the hand-off's `Offer`'s).
async fn a_hand_off_takes_exactly_what_a_claim_with_the_same_filter_takes(polling: PollingMode) {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("handoff_tag_rule", polling, slow_recheck).await;
    let set = |tags: &[&str]| tags.iter().map(|t| t.to_string()).collect::<HashSet<_>>();
    let filters = [
        TagFilter::DefaultOnly,
        TagFilter::Tags(set(&["gpu"])),
        TagFilter::DefaultAnd(set(&["gpu"])),
        TagFilter::Any,
    ];
    let item = |instance: &str, tag: &str| match tag {
        "" => activity_item(instance, 2),
        tag => tagged(instance, 2, tag),
    };
    let mut case = 0;
    for filter in filters {
        let mut claimed = HashSet::new();
        for tag in ["", "gpu", "cpu"] {
            h.provider
                .enqueue_for_worker(item(&format!("c{tag}"), tag))
                .await
                .unwrap();
        }
        while let Some((taken, _, _)) = h
            .provider
            .fetch_work_item(LONG, Duration::ZERO, None, &filter)
            .await
            .unwrap()
        {
            let WorkItem::ActivityExecute { tag, .. } = taken else {
                unreachable!()
            };
            claimed.insert(tag.unwrap_or_default());
        }
        h.exec("DELETE FROM S.worker_queue", None).await;

        let mut handed = HashSet::new();
        for tag in ["", "gpu", "cpu"] {
            case += 1;
            let instance = format!("t{case}");
            let token = claimed_start(&h, &instance, LONG).await;
            let fetch = h
                .waiting_worker_fetch(None, filter.clone(), Duration::from_secs(1))
                .await;
            let claims_before = claims("worker");
            ack_scheduling(&h.provider, &instance, &token, vec![item(&instance, tag)])
                .await
                .unwrap();
            let fetched = fetch.await.unwrap();
            if fetched.is_some() && claims("worker") == claims_before {
                handed.insert(tag.to_string());
            }
            h.exec("DELETE FROM S.worker_queue", None).await;
        }
        assert_eq!(handed, claimed, "{filter:?}: handed out, against claimed");
    }
    h.drop().await;
}

/// A reserved fetch cancelled while its ack runs (its dispatcher shut down): the item the
/// ack stores claimed for it is given back, first attempt returned, and a claim takes it.
async fn a_cancelled_reserved_fetch_gives_its_item_back(polling: PollingMode) {
    let _serial = SERIAL.lock().await;
    let h = Harness::with_polling("handoff_dropped", polling, slow_recheck).await;
    let token = claimed_start(&h, "h6", LONG).await;
    let fetch = waiting_fetch(&h, TagFilter::DefaultOnly).await;

    // The ack reserves the waiting fetch, then its statement waits for the lease row.
    let holder = h
        .hold("SELECT 1 FROM S.instance_leases WHERE instance_id = 'h6' FOR UPDATE")
        .await;
    let provider = h.provider.clone();
    let ack = tokio::spawn(async move {
        ack_scheduling(&provider, "h6", &token, vec![activity_item("h6", 2)]).await
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!fetch.is_finished(), "the reserved fetch waits for its ack");
    fetch.abort();
    assert!(fetch.await.unwrap_err().is_cancelled());

    holder.rollback().await.unwrap();
    ack.await.unwrap().unwrap();
    assert_eq!(
        claimed_after_give_back(&h).await,
        (activity_item("h6", 2), 1)
    );
    h.drop().await;
}
