//! Which lease rows the orchestrator claim's candidate scan walks: those whose `ready_at`
//! has come (instance_leases_ready_idx, up to now). A redelivery's claim moves its
//! instance's `ready_at` to when the lease, should it run out, becomes claimable again
//! (functions/stamp_lease.sql), and its renewals move it on with the lease's end, so a herd
//! of instances whose turns keep crashing, each backing off for longer after every lease
//! that ran out, costs the claims of everyone else nothing; an ack that cannot settle
//! `ready_at` lowers it to now, so what the turn left queued is not held back until then;
//! and an empty claim's read of when the next delayed work becomes visible starts past what
//! its scan passed over. Counted with the server's index counters, after a vacuum: every
//! update that moved a row's `ready_at` left an index entry behind at the old value, which
//! autovacuum takes in production (and this machine's PostgreSQL runs without).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::{Harness, LONG, raised, start};
use duroxide::providers::Provider;
use steadfast_pg::PollingMode;

/// Instances redelivered by the set-up: several times what the measured claims may read.
const HERD: usize = 150;

/// A backoff far longer than the tests, so a lease that ran out stays backing off.
fn long_backoff(o: &mut steadfast_pg::ProviderOptions) {
    o.claim.redelivery_backoff.base = Duration::from_secs(60);
    o.claim.redelivery_backoff.cap = Duration::from_secs(60);
}

/// Claim `n` ready instances, give their messages back counted, and claim them all again
/// (their second attempt) with leases of `lease`; returns the second claims' instances and
/// tokens.
async fn redeliver(h: &Harness, n: usize, lease: Duration) -> Vec<(String, String)> {
    let p = &h.provider;
    let mut first = Vec::new();
    for _ in 0..n {
        let (_, token, _) = p
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .expect("a ready instance");
        first.push(token);
    }
    for token in first {
        p.abandon_orchestration_item(&token, None, false)
            .await
            .unwrap();
    }
    let mut second = Vec::new();
    for _ in 0..n {
        let (item, token, attempt) = p
            .fetch_orchestration_item(lease, Duration::ZERO, None)
            .await
            .unwrap()
            .expect("an instance given back");
        assert_eq!(attempt, 2, "{}", item.instance);
        second.push((item.instance, token));
    }
    second
}

/// Enqueue a start for each of `HERD` instances named `<prefix>-<i>`, then [`redeliver`]
/// them all.
async fn redelivered_herd(h: &Harness, prefix: &str, lease: Duration) -> Vec<(String, String)> {
    for i in 0..HERD {
        h.provider
            .enqueue_for_orchestrator(start(&format!("{prefix}-{i}")), None)
            .await
            .unwrap();
    }
    redeliver(h, HERD, lease).await
}

/// Enqueue five `ready-*` starts, then five claims of them (on a fresh provider with `tune`
/// applied, `h`'s closed) must read fewer lease-table index entries than half the herd.
async fn assert_claims_pass_over_the_herd(
    h: &Harness,
    tune: fn(&mut steadfast_pg::ProviderOptions),
    herd: &str,
) {
    for i in 0..5 {
        h.provider
            .enqueue_for_orchestrator(start(&format!("ready-{i}")), None)
            .await
            .unwrap();
    }
    h.provider.close().await;
    h.vacuum("instance_leases").await;
    let before = h.rows_read("instance_leases").await;
    h.assert_five_cheap_claims_of_ready_work(tune).await;
    let read = h.rows_read("instance_leases").await - before;
    assert!(
        read < HERD as i64 / 2,
        "five claims read {read} lease-table index entries with {HERD} {herd}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_backing_off_after_a_lost_lease_are_not_walked_by_other_claims() {
    let h = Harness::new("scan_backoff", long_backoff).await;
    redelivered_herd(&h, "crashed", Duration::from_secs(1)).await;
    // Their holder is gone: the leases run out and back off for a minute. Their messages
    // are older than any enqueued now, so they would head the scan's index range.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_claims_pass_over_the_herd(&h, long_backoff, "leases backing off").await;
    h.drop().await;
}

/// A backoff shorter than the test's wait, so that the ready_at a redelivery's claim set
/// passes while its renewed lease still lives.
fn short_backoff(o: &mut steadfast_pg::ProviderOptions) {
    o.claim.redelivery_backoff.base = Duration::from_secs(1);
    o.claim.redelivery_backoff.cap = Duration::from_secs(1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redeliveries_whose_leases_are_renewed_are_not_walked_by_other_claims() {
    let h = Harness::new("scan_renewed", short_backoff).await;
    let claimed = redelivered_herd(&h, "renewed", Duration::from_secs(4)).await;
    // Each claim set ready_at at most 6 s on (the 4 s lease, then a backoff of 1 s with
    // jitter up to 100 %); the renewals move it on with the lease, 2 minutes.
    let last_claim = tokio::time::Instant::now();
    for (_, token) in claimed {
        h.provider
            .renew_orchestration_item_lock(&token, Duration::from_secs(120))
            .await
            .unwrap();
    }
    tokio::time::sleep_until(last_claim + Duration::from_millis(6200)).await;
    assert_claims_pass_over_the_herd(&h, short_backoff, "renewed redeliveries").await;
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_claim_passes_over_live_leases_once() {
    let h = Harness::new("scan_empty", |_| {}).await;
    for i in 0..HERD {
        h.provider
            .enqueue_for_orchestrator(start(&format!("live-{i}")), None)
            .await
            .unwrap();
    }
    for _ in 0..HERD {
        h.provider
            .fetch_orchestration_item(LONG, Duration::ZERO, None)
            .await
            .unwrap()
            .expect("a ready instance");
    }
    h.provider.close().await;
    h.vacuum("instance_leases").await;
    let before = h.rows_read("instance_leases").await;
    // The candidate scan passes over every live lease (their messages are ready); the
    // read of when the next delayed work becomes visible must not walk them again.
    let claimer = common::provider_with(common::options(&h.schema, PollingMode::Listen)).await;
    let nothing = claimer
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap();
    assert!(nothing.is_none(), "every instance is leased");
    claimer.close().await;
    let read = h.rows_read("instance_leases").await - before;
    assert!(
        read < HERD as i64 * 3 / 2,
        "an empty claim read {read} lease-table index entries with {HERD} live leases"
    );
    h.drop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ack_that_cannot_settle_ready_at_leaves_the_rest_claimable_now() {
    let h = Harness::new("scan_fence", |o| {
        long_backoff(o);
        o.claim.max_batch_messages = Some(1);
    })
    .await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("left"), None)
        .await
        .unwrap();
    p.enqueue_for_orchestrator(raised("left", "later"), None)
        .await
        .unwrap();
    // The second attempt takes the start alone (one message a batch) and moves ready_at
    // past its lease; the event stays queued.
    let (instance, token) = redeliver(&h, 1, LONG).await.remove(0);
    assert_eq!(instance, "left");
    // An enqueue in flight that found ready_at low enough holds the instance's fence
    // shared, so the ack's release cannot take it.
    let enqueue = h
        .hold("SELECT pg_advisory_xact_lock_shared(S.ready_at_fence_key('left'))")
        .await;
    h.ack_started("left", &token).await;
    enqueue.rollback().await.unwrap();
    let (item, _, _) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .unwrap()
        .expect("the event the turn left queued is claimable at once, not after the backoff");
    assert_eq!(item.instance, "left");
    h.drop().await;
}
