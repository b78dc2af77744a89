//! A fetch woken by an enqueue passes the wake-up on only when its claim saw more work
//! ready (src/polling.rs): one item costs one claim, not a claim and an empty one, and a
//! batch announced by one wake-up still fans out over the idle fetches. On both queues.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use common::harness::{Harness, LONG, activity_item, raised, running_metadata, start};
use duroxide::providers::{Provider, WorkItem};
use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use steadfast_pg::{PollingMode, PostgresProvider, ProviderOptions};
use tokio::sync::Mutex;
use tokio::task::JoinSet;

const FETCHES: usize = 3;
/// Long enough that no fetch here claims again on its own before the test ends.
const RECHECK: Duration = Duration::from_secs(60);
const POLL: Duration = Duration::from_secs(30);
/// Well inside `POLL`: a fetch also claims once more when its poll times out.
const FAN_OUT_WITHIN: Duration = Duration::from_secs(10);

/// The claim counters are process-wide: one test at a time.
static SERIAL: Mutex<()> = Mutex::const_new(());

#[derive(Clone, Copy, Debug)]
enum Queue {
    Orchestrator,
    Worker,
}

impl Queue {
    const BOTH: [Queue; 2] = [Queue::Orchestrator, Queue::Worker];

    fn label(self) -> &'static str {
        match self {
            Queue::Orchestrator => "orchestrator",
            Queue::Worker => "worker",
        }
    }

    /// Item `n` of this queue, for instance `instance` (orchestrator: a start of
    /// `instance-n`).
    fn item(self, instance: &str, n: u64) -> WorkItem {
        match self {
            Queue::Orchestrator => start(&format!("{instance}-{n}")),
            Queue::Worker => activity_item(instance, n),
        }
    }

    async fn enqueue(self, provider: &PostgresProvider, item: WorkItem) {
        match self {
            Queue::Orchestrator => provider.enqueue_for_orchestrator(item, None).await,
            Queue::Worker => provider.enqueue_for_worker(item).await,
        }
        .unwrap();
    }

    /// `FETCHES` long-polling fetches of this queue; each yields whether it got an item.
    fn waiting_fetches(self, provider: &Arc<PostgresProvider>) -> JoinSet<bool> {
        let mut fetches = JoinSet::new();
        for _ in 0..FETCHES {
            let p = provider.clone();
            fetches.spawn(async move {
                match self {
                    Queue::Orchestrator => p
                        .fetch_orchestration_item(LONG, POLL, None)
                        .await
                        .unwrap()
                        .is_some(),
                    Queue::Worker => p
                        .fetch_work_item(LONG, POLL, None, &Default::default())
                        .await
                        .unwrap()
                        .is_some(),
                }
            });
        }
        fetches
    }
}

fn snapshotter() -> &'static Snapshotter {
    static SNAPSHOTTER: OnceLock<Snapshotter> = OnceLock::new();
    SNAPSHOTTER.get_or_init(|| {
        let recorder = DebuggingRecorder::new();
        let snapshotter = recorder.snapshotter();
        recorder.install().unwrap();
        snapshotter
    })
}

/// Claims of `queue` that found nothing, so far. A snapshot takes (and zeroes) every
/// count since the last, so both queues' totals are kept here.
fn empty_claims(queue: Queue) -> u64 {
    static TOTALS: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
    for (key, _, _, value) in snapshotter().snapshot().into_vec() {
        let key = key.key();
        let label = |name: &str| {
            key.labels()
                .find(|l| l.key() == name)
                .map(|l| l.value().to_string())
        };
        if key.name() != steadfast_pg::metrics::CLAIMS
            || label("outcome").as_deref() != Some("empty")
        {
            continue;
        }
        let (DebugValue::Counter(n), Some(q)) = (value, label("queue")) else {
            continue;
        };
        if let Some(i) = Queue::BOTH.iter().position(|q2| q2.label() == q) {
            TOTALS[i].fetch_add(n, Ordering::SeqCst);
        }
    }
    TOTALS[queue as usize].load(Ordering::SeqCst)
}

async fn until_empty_claims(queue: Queue, at_least: u64) {
    let deadline = tokio::time::Instant::now() + LONG;
    while empty_claims(queue) < at_least {
        assert!(
            tokio::time::Instant::now() < deadline,
            "fetches never polled"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn slow_recheck(options: &mut ProviderOptions) {
    options.claim.long_poll_recheck = RECHECK;
}

async fn one_item_wakes_one_fetch(queue: Queue) {
    let _serial = SERIAL.lock().await;
    let base = empty_claims(queue);
    let h = Harness::new(&format!("wake_one_{}", queue.label()), slow_recheck).await;
    let mut fetches = queue.waiting_fetches(&h.provider);
    until_empty_claims(queue, base + FETCHES as u64).await;
    let waiting = empty_claims(queue);

    queue.enqueue(&h.provider, queue.item("one", 1)).await;
    let claimed = fetches.join_next().await.unwrap().unwrap();
    assert!(claimed, "the woken fetch claims the item");
    // A passed-on wake-up would have made another fetch claim (and find nothing) by now.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        empty_claims(queue) - waiting,
        0,
        "{queue:?} claims that found nothing after one item was enqueued"
    );
    fetches.abort_all();
    h.drop().await;
}

/// Another process commits `FETCHES` items in one transaction (a turn's), so this one
/// hears one wake-up for them: the fetch it wakes saw more ready and passes it on, and so
/// on.
async fn one_wake_up_for_several_items_fans_out(queue: Queue) {
    let _serial = SERIAL.lock().await;
    let h = Harness::new(&format!("wake_fan_{}", queue.label()), slow_recheck).await;
    let other = Harness {
        schema: h.schema.clone(),
        provider: common::provider_with(common::options(&h.schema, PollingMode::Listen)).await,
    };
    other.create_instance("fan").await;
    other
        .provider
        .enqueue_for_orchestrator(raised("fan", "go"), None)
        .await
        .unwrap();
    let (_, token, _) = other.fetch_only("fan").await;

    let base = empty_claims(queue);
    let mut fetches = queue.waiting_fetches(&h.provider);
    until_empty_claims(queue, base + FETCHES as u64).await;
    let items = (1..=FETCHES as u64).map(|n| queue.item("fan", n)).collect();
    let (worker_items, orchestrator_items) = match queue {
        Queue::Worker => (items, vec![]),
        Queue::Orchestrator => (vec![], items),
    };
    other
        .provider
        .ack_orchestration_item(
            &token,
            1,
            vec![],
            worker_items,
            orchestrator_items,
            running_metadata(),
            vec![],
        )
        .await
        .unwrap();

    let mut claimed = 0;
    let deadline = tokio::time::Instant::now() + FAN_OUT_WITHIN;
    while let Ok(Some(got)) = tokio::time::timeout_at(deadline, fetches.join_next()).await {
        claimed += usize::from(got.unwrap());
    }
    assert_eq!(
        claimed, FETCHES,
        "{queue:?} items claimed within {FAN_OUT_WITHIN:?} (the recheck is {RECHECK:?})"
    );
    fetches.abort_all();
    other.provider.close().await;
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_activity_wakes_one_worker_fetch() {
    one_item_wakes_one_fetch(Queue::Worker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_message_wakes_one_orchestrator_fetch() {
    one_item_wakes_one_fetch(Queue::Orchestrator).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_wake_up_for_several_activities_fans_out() {
    one_wake_up_for_several_items_fans_out(Queue::Worker).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_wake_up_for_several_starts_fans_out() {
    one_wake_up_for_several_items_fans_out(Queue::Orchestrator).await;
}
