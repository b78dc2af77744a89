//! A wait right after this process started its instance skips the first status read
//! (`src/watched_starts.rs`), and never misses an end for it: an end heard before the wait,
//! or an instance that had ended before the start, is read at once.
//!
//! `Listen`: the end is committed by a provider standing in for another process and
//! heard by NOTIFY. `SessionFree`: by another provider of this process (as a Node
//! `Runtime` beside its `Client`), connected directly (so that backends exit with their
//! providers and report their counts), and the waiter's recheck is 30 s, so a wait that
//! is not woken shows.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::harness::{Harness, completed_turn, start, started_event};
use duroxide::providers::{ExecutionMetadata, Provider};
use duroxide::{Event, OrchestrationStatus};
use steadfast_pg::{PollingMode, PostgresProvider, ProviderOptions};

const BOTH: [PollingMode; 2] = [PollingMode::Listen, PollingMode::SessionFree];

/// The waiter's and the acker's options, their connections named after the schema (so
/// that [`Pair::close`] can wait for their backends to exit and report their counts).
fn waiter_and_acker(schema: &str, polling: PollingMode) -> [ProviderOptions; 2] {
    let named = |o| common::with_application_name(o, &common::application_name(schema));
    let [w, a] = match polling {
        PollingMode::Listen => [
            common::options(schema, polling),
            common::other_process(schema, polling),
        ],
        PollingMode::SessionFree => {
            let direct = || {
                let mut o = common::options(schema, polling);
                o.database_url = common::database_url();
                o.claim.long_poll_recheck = Duration::from_secs(30);
                o
            };
            [direct(), direct()]
        }
    };
    [named(w), named(a)]
}

/// The longest a wait that reads at once (or is woken by the end) may take: below the
/// waiter's recheck (1 s with a listener, 30 s session-free here), so that a wait that
/// skipped its first read and was not woken fails.
fn prompt(polling: PollingMode) -> Duration {
    match polling {
        PollingMode::Listen => Duration::from_millis(900),
        PollingMode::SessionFree => Duration::from_secs(5),
    }
}

struct Pair {
    h: Harness,
    waiter: Arc<PostgresProvider>,
    acker: Arc<PostgresProvider>,
}

impl Pair {
    async fn new(label: &str, polling: PollingMode) -> Self {
        let h = Harness::new(label, |_| {}).await;
        h.provider.close().await;
        let [w, a] = waiter_and_acker(&h.schema, polling);
        let waiter = common::provider_with(w).await;
        let acker = common::provider_with(a).await;
        Self { h, waiter, acker }
    }

    /// The acker claims `instance`'s start.
    async fn claim(&self, instance: &str) -> String {
        let (item, token, _) = self
            .acker
            .fetch_orchestration_item(Duration::from_secs(30), Duration::ZERO, None)
            .await
            .unwrap()
            .expect("the start");
        assert_eq!(item.instance, instance);
        token
    }

    /// The acker completes `instance` in the turn it claimed with `token`.
    async fn complete(&self, instance: &str, token: &str) {
        let (events, metadata): (Vec<Event>, ExecutionMetadata) = completed_turn(instance, 2);
        let mut history = vec![started_event(instance)];
        history.extend(events);
        self.acker
            .ack_orchestration_item(token, 1, history, vec![], vec![], metadata, vec![])
            .await
            .unwrap();
    }

    /// `starter` starts `instance`, and the acker runs it to its end.
    async fn run_to_end(&self, starter: &PostgresProvider, instance: &str) {
        self.start_by(starter, instance).await;
        let token = self.claim(instance).await;
        self.complete(instance, &token).await;
    }

    /// `provider` enqueues a plain start of `instance`.
    async fn start_by(&self, provider: &PostgresProvider, instance: &str) {
        provider
            .enqueue_for_orchestrator(start(instance), None)
            .await
            .unwrap();
    }

    /// The waiter's wait for `instance` returns it completed, and within
    /// [`prompt`]`(polling)` (`after` names the case).
    async fn assert_completes_promptly(&self, instance: &str, polling: PollingMode, after: &str) {
        let t = Instant::now();
        let status = self
            .waiter
            .wait_for_orchestration(instance, Duration::from_secs(60))
            .await
            .unwrap();
        let took = t.elapsed();
        assert_completed(&status, polling);
        assert!(
            took < prompt(polling),
            "{polling:?}: {after}, the wait took {took:?}"
        );
    }

    async fn close(&self) {
        self.waiter.close().await;
        self.acker.close().await;
        common::wait_connections_gone(
            &common::application_name(&self.h.schema),
            Duration::from_secs(60),
        )
        .await;
    }

    async fn drop(self) {
        self.close().await;
        common::drop_schema(&self.h.schema).await;
    }
}

fn assert_completed(status: &OrchestrationStatus, polling: PollingMode) {
    assert!(
        matches!(status, OrchestrationStatus::Completed { output, .. } if output == "\"ok\""),
        "{polling:?}: {status:?}"
    );
}

/// History reads (status reads among them) of: the waiter starts `w`, the acker claims
/// it, the waiter waits for it (if `wait`), the acker completes it 100 ms into the wait;
/// and how long the wait took.
async fn history_reads_of_start_then_wait(polling: PollingMode, wait: bool) -> (i64, Duration) {
    let pair = Pair::new("wait_start", polling).await;
    let before = pair.h.history_reads().await;
    pair.start_by(&pair.waiter, "w").await;
    let token = pair.claim("w").await;
    let waiting = wait.then(|| {
        let waiter = Arc::clone(&pair.waiter);
        tokio::spawn(async move {
            let t = Instant::now();
            let status = waiter
                .wait_for_orchestration("w", Duration::from_secs(60))
                .await;
            (status, t.elapsed())
        })
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    pair.complete("w", &token).await;
    let mut took = Duration::ZERO;
    if let Some(waiting) = waiting {
        let (status, elapsed) = waiting.await.unwrap();
        assert_completed(&status.unwrap(), polling);
        took = elapsed;
    }
    pair.close().await;
    let reads = pair.h.history_reads().await - before;
    pair.drop().await;
    (reads, took)
}

/// A client that starts an orchestration and waits for it reads its status once, when
/// its end is heard, not also right after the start (two reads before this change). A
/// machine slow enough to keep the end from the waiter past its 1 s backstop (`Listen`)
/// adds the backstop's reads, which are allowed for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_right_after_its_start_reads_the_status_once() {
    for polling in BOTH {
        let (nobody, _) = history_reads_of_start_then_wait(polling, false).await;
        let (reads, took) = history_reads_of_start_then_wait(polling, true).await;
        let waited = reads - nobody;
        let backstops = match polling {
            PollingMode::Listen => took.as_secs() as i64,
            PollingMode::SessionFree => 0,
        };
        println!("{polling:?}: status reads of the wait: {waited} in {took:?}");
        assert_eq!(
            waited,
            1 + backstops,
            "{polling:?}: the wait read the status {waited} times in {took:?}"
        );
    }
}

/// The instance ended before its wait began, after its start was watched: the end heard
/// ends the watch, and the wait reads at once instead of waiting for a wake-up that came
/// before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_end_heard_before_the_wait_is_read_at_once() {
    for polling in BOTH {
        let pair = Pair::new("wait_ended", polling).await;
        pair.run_to_end(&pair.waiter, "w").await;
        // The end's notification reaches the waiter's listener (Listen).
        tokio::time::sleep(Duration::from_millis(300)).await;
        pair.assert_completes_promptly("w", polling, "with the end heard before it")
            .await;
        pair.drop().await;
    }
}

/// A start of an instance that has run (and ended) before is not watched: its end may be
/// long past, so the wait reads at once. Both for a plain start (a duplicate the runtime
/// drops) and an exclusive one (refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_of_an_instance_that_ended_before_is_read_at_once() {
    for polling in BOTH {
        let pair = Pair::new("wait_again", polling).await;
        pair.run_to_end(&pair.acker, "w").await;
        tokio::time::sleep(Duration::from_millis(300)).await;

        pair.start_by(&pair.waiter, "w").await;
        pair.assert_completes_promptly("w", polling, "after a plain start")
            .await;
        let exclusive = pair.waiter.start_orchestration_exclusive(start("w")).await;
        assert!(!exclusive.unwrap(), "the instance exists");
        pair.assert_completes_promptly("w", polling, "after an exclusive start")
            .await;
        pair.drop().await;
    }
}

/// The skipped read changes nothing else: a wait right after a start whose instance does
/// not run times out as duroxide's wait does, and the instance's end is found after that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_after_a_start_still_times_out() {
    for polling in BOTH {
        let pair = Pair::new("wait_never", polling).await;
        pair.start_by(&pair.waiter, "w").await;
        let t = Instant::now();
        let got = pair
            .waiter
            .wait_for_orchestration("w", Duration::from_millis(300))
            .await;
        assert!(
            matches!(got, Err(duroxide::ClientError::Timeout)),
            "{polling:?}: {got:?}"
        );
        assert!(t.elapsed() >= Duration::from_millis(300));
        let token = pair.claim("w").await;
        pair.complete("w", &token).await;
        pair.assert_completes_promptly("w", polling, "after a timeout")
            .await;
        pair.drop().await;
    }
}
