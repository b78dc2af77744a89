//! Wake-up notifications to other processes (src/wake.rs) are folded: a process sends at
//! most one per 5 ms (`PUBLISH_GAP`), however many enqueues it commits, since each is a
//! transaction of its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::harness::{Harness, start};
use duroxide::providers::Provider;

const ENQUEUES: usize = 200;
const GAP_MS: u128 = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_sends_at_most_one_wake_up_per_gap() {
    let h = Harness::new("wake_gap", |_| {}).await;
    let mut listener = sqlx::postgres::PgListener::connect(&common::database_url())
        .await
        .unwrap();
    listener.listen(&h.wake_channel().await).await.unwrap();
    let started = Instant::now();
    for i in 0..ENQUEUES {
        h.provider
            .enqueue_for_orchestrator(start(&format!("i{i}")), None)
            .await
            .unwrap();
    }
    let elapsed = started.elapsed().as_millis();
    let mut heard = 0u128;
    while let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(500), listener.recv()).await {
        heard += 1;
    }
    assert!(heard >= 1, "no wake-up for {ENQUEUES} enqueues");
    // One right away, then at most one per gap, the last up to a gap after the last enqueue.
    let bound = elapsed / GAP_MS + 2;
    assert!(
        heard <= bound,
        "{heard} wake-ups for {ENQUEUES} enqueues in {elapsed} ms (at most {bound})"
    );
    h.drop().await;
}
