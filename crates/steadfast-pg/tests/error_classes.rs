//! Errors classified right (issue 9, item 6): what the database says about itself or the
//! fleet (a read-only server mid-failover, a full disk, a statement out of time) is a
//! retryable error and never fails an instance; a claim that keeps running out of
//! `statement_timeout` counts its attempts, so the attempt ceiling ends it instead of it
//! being retried uncounted for ever.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::{Harness, LONG, raised, running_metadata, start};
use duroxide::providers::Provider;
use duroxide::{ErrorDetails, EventKind};
use rand::Rng;
use steadfast_pg::PollingMode;

/// An instance whose history takes far longer than 50 ms to read: 40 000 events of 2 KB
/// (80 MB), written straight into the table (they are never decoded here).
async fn instance_too_large_to_read_in_time(h: &Harness, instance: &str) {
    h.create_instance(instance).await;
    h.exec(
        "INSERT INTO S.history (instance_id, execution_id, event_id, event_type, event_data) \
         SELECT $1, 1, n, 'CustomStatusUpdated', repeat('x', 2048) \
         FROM generate_series(2, 40001) AS n",
        Some(instance),
    )
    .await;
    h.provider
        .enqueue_for_orchestrator(raised(instance, "go"), None)
        .await
        .unwrap();
}

/// Before: every claim of such an instance timed out and rolled back its own increment, so
/// it was retried for ever at attempt 0. Now each timed-out claim counts, the instance
/// backs off, and the ceiling fails it as poison after `max_attempts + 1` attempts. It is
/// never handed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_that_keeps_timing_out_counts_its_attempts_until_the_ceiling() {
    // Set up with the default timeout (a first claim on a loaded machine can take 50 ms),
    // then claim through a provider whose statements get 50 ms.
    let h = Harness::new("timeout_counts", |_| {}).await;
    instance_too_large_to_read_in_time(&h, "huge").await;
    let mut o = common::options(&h.schema, PollingMode::Listen);
    o.statement_timeout = Some(Duration::from_millis(50));
    o.claim.max_attempts = Some(2);
    o.claim.redelivery_backoff.base = Duration::from_millis(1);
    o.claim.redelivery_backoff.cap = Duration::from_millis(1);
    let p = &common::provider_with(o).await;
    let admin = p.as_management_capability().unwrap();
    let mut fetches = 0;
    while admin.get_instance_info("huge").await.unwrap().status != "Failed" {
        fetches += 1;
        assert!(fetches <= 60, "still not failed after {fetches} fetches");
        match p.fetch_orchestration_item(LONG, Duration::ZERO, None).await {
            Ok(Some((item, _, _))) => panic!(
                "handed out {} although it cannot be read in time",
                item.instance
            ),
            Ok(None) => {}
            Err(e) => assert!(e.is_retryable(), "{e}"),
        }
        assert!(p.max_attempt_count("huge").await.unwrap() <= 3);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let letters = p.list_dead_letters(&Default::default()).await.unwrap();
    assert_eq!(letters.len(), 1);
    assert_eq!(
        (letters[0].reason.as_str(), letters[0].attempt_count),
        ("attempt_ceiling", 3)
    );
    let last = h
        .sql_f64(
            "SELECT max(event_id)::float8 FROM S.history WHERE instance_id = $1",
            "huge",
        )
        .await;
    assert_eq!(
        last, 40_002.0,
        "the poison failure was appended after the 40 001 events"
    );
    p.close().await;
    h.drop().await;
}

/// Connect as a role whose transactions are read-only, as every session is on a primary
/// that was just demoted (SQLSTATE 25006 on every write): claims, enqueues and acks fail
/// with retryable errors, so the runtime retries them instead of failing the instance, and
/// once writes work again the same claim's turn commits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_database_gives_retryable_errors_and_fails_nothing() {
    let h = Harness::new("readonly", |_| {}).await;
    let p = &h.provider;
    h.create_instance("ro").await;
    p.enqueue_for_orchestrator(start("other"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("other").await;
    // Ready work for the read-only provider's claim to write to.
    p.enqueue_for_orchestrator(raised("ro", "go"), None)
        .await
        .unwrap();

    let role = format!("sft_ro_{:08x}", rand::thread_rng().r#gen::<u32>());
    let schema = format!("\"{}\"", h.schema);
    for sql in [
        format!("CREATE ROLE {role} LOGIN"),
        format!("GRANT USAGE ON SCHEMA {schema} TO {role}"),
        format!("GRANT ALL ON ALL TABLES IN SCHEMA {schema} TO {role}"),
        format!("GRANT ALL ON ALL SEQUENCES IN SCHEMA {schema} TO {role}"),
        format!("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {schema} TO {role}"),
        format!("ALTER ROLE {role} SET default_transaction_read_only = on"),
    ] {
        h.exec(&sql, None).await;
    }
    let url = common::database_url();
    let (scheme, rest) = url.split_once("://").unwrap();
    let host_and_db = rest.rsplit_once('@').map_or(rest, |(_, after)| after);
    let mut options = common::options(&h.schema, PollingMode::Listen);
    options.database_url = format!("{scheme}://{role}@{host_and_db}");
    options.run_migrations = false;
    let read_only = common::provider_with(options).await;

    let enqueue = read_only
        .enqueue_for_orchestrator(start("new"), None)
        .await
        .expect_err("writes fail");
    assert!(enqueue.is_retryable(), "{enqueue}");
    assert!(enqueue.to_string().contains("25006"), "{enqueue}");
    let fetch = read_only
        .fetch_orchestration_item(LONG, Duration::ZERO, None)
        .await
        .expect_err("a claim writes");
    assert!(fetch.is_retryable(), "{fetch}");
    let ack = read_only
        .ack_orchestration_item(
            &token,
            1,
            vec![common::harness::started_event("other")],
            vec![],
            vec![],
            running_metadata(),
            vec![],
        )
        .await
        .expect_err("an ack writes");
    assert!(ack.is_retryable(), "{ack}");
    read_only.close().await;
    h.exec(&format!("DROP OWNED BY {role}"), None).await;
    h.exec(&format!("DROP ROLE {role}"), None).await;

    // Nothing was failed, and the claim's turn commits once writes work again.
    h.ack_started("other", &token).await;
    let history = p.read("other").await.unwrap();
    assert!(matches!(
        history.first().map(|e| &e.kind),
        Some(EventKind::OrchestrationStarted { .. })
    ));
    assert!(!history.iter().any(|e| matches!(
        &e.kind,
        EventKind::OrchestrationFailed {
            details: ErrorDetails::Infrastructure { .. }
        }
    )));
    h.drop().await;
}

/// Make every write of `table` fail with SQLSTATE `code` (as a full disk or a demoted
/// primary would) until `DROP TRIGGER refuse_writes ON S.<table>`.
async fn refuse_writes(h: &Harness, table: &str, code: &str) {
    h.exec(
        &format!(
            "CREATE FUNCTION S.refuse_writes() RETURNS trigger LANGUAGE plpgsql AS $f$
             BEGIN RAISE EXCEPTION 'refused for the test' USING ERRCODE = '{code}'; END $f$"
        ),
        None,
    )
    .await;
    h.exec(
        &format!(
            "CREATE TRIGGER refuse_writes BEFORE INSERT OR UPDATE ON S.{table}
             FOR EACH ROW EXECUTE FUNCTION S.refuse_writes()"
        ),
        None,
    )
    .await;
}

/// While claims fail with a retryable error (here a full disk, 53100), every fetch of the
/// provider backs off together: 16 dispatchers polling for 2 s send a few probes, not a
/// claim each every few milliseconds; no attempt is counted; and once writes work again
/// the next probe claims. Before, each dispatcher retried on its own (duroxide's
/// per-dispatcher backoff, or none when it polls in a loop as here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_failing_with_a_full_disk_back_off_together() {
    let h = Harness::new("disk_full", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("ready"), None)
        .await
        .unwrap();
    refuse_writes(&h, "instance_leases", "53100").await;
    let polling_until = std::time::Instant::now() + Duration::from_secs(2);
    let dispatchers = (0..16).map(|_| {
        let p = std::sync::Arc::clone(p);
        tokio::spawn(async move {
            let (mut calls, mut errors) = (0u32, 0u32);
            while std::time::Instant::now() < polling_until {
                calls += 1;
                match p.fetch_orchestration_item(LONG, Duration::ZERO, None).await {
                    Ok(None) => {}
                    Ok(Some((item, _, _))) => panic!("claimed {} on a full disk", item.instance),
                    Err(e) => {
                        assert!(e.is_retryable(), "{e}");
                        errors += 1;
                    }
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            (calls, errors)
        })
    });
    let (mut calls, mut errors) = (0, 0);
    for d in dispatchers.collect::<Vec<_>>() {
        let (c, e) = d.await.unwrap();
        calls += c;
        errors += e;
    }
    println!("{calls} fetches, {errors} of them reached the database and failed");
    assert!(calls >= 16 * 20, "the dispatchers kept polling: {calls}");
    assert!(
        errors <= 40,
        "{errors} claims failed: the fetches did not back off together"
    );
    assert_eq!(p.max_attempt_count("ready").await.unwrap(), 0);

    h.exec("DROP TRIGGER refuse_writes ON S.instance_leases", None)
        .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Ok(Some((item, _, attempt))) =
            p.fetch_orchestration_item(LONG, Duration::ZERO, None).await
        {
            assert_eq!((item.instance.as_str(), attempt), ("ready", 1));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never claimed again");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    h.drop().await;
}

/// An ordinary turn ack rides out a retryable error while its lease may live: the database
/// refuses writes (25006, a demoted primary) for a second, and the ack commits once it
/// takes them again. Before, it failed at once; duroxide retries an ack for about 0.3 s and
/// then commits the turn as *failed* with the same token, which fails a healthy instance
/// whenever the database comes back in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_ack_rides_out_a_read_only_second_while_its_lease_lives() {
    let h = Harness::new("ack_ride_out", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(start("blip"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("blip").await;
    refuse_writes(&h, "history", "25006").await;
    let ack = tokio::spawn({
        let p = std::sync::Arc::clone(p);
        async move {
            p.ack_orchestration_item(
                &token,
                1,
                vec![common::harness::started_event("blip")],
                vec![],
                vec![],
                running_metadata(),
                vec![],
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !ack.is_finished(),
        "the ack gave up while its lease lived: {:?}",
        ack.await
    );
    h.exec("DROP TRIGGER refuse_writes ON S.history", None)
        .await;
    ack.await
        .unwrap()
        .expect("the ack commits once writes work");
    let history = p.read("blip").await.unwrap();
    assert!(matches!(
        history.first().map(|e| &e.kind),
        Some(EventKind::OrchestrationStarted { .. })
    ));
    h.drop().await;
}
