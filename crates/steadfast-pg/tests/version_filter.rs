//! The claim's version filter (duroxide's `DispatcherCapabilityFilter`): an instance whose
//! current execution is pinned outside a dispatcher's range is never handed to it, and is
//! to a dispatcher whose range holds the pin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::{Harness, LONG, raised, running_metadata, started_event};

use std::time::Duration;

use duroxide::providers::{DispatcherCapabilityFilter, ExecutionMetadata, Provider, SemverRange};
use semver::Version;
use steadfast_pg::PollingMode;

/// Instances pinned outside the range in the next test: many times one claim's scan.
const OTHER_VERSION_INSTANCES: i64 = 2000;

fn range(min: &str, max: &str) -> DispatcherCapabilityFilter {
    DispatcherCapabilityFilter {
        supported_duroxide_versions: vec![SemverRange::new(
            Version::parse(min).unwrap(),
            Version::parse(max).unwrap(),
        )],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_pinned_outside_a_dispatchers_range_is_not_handed_to_it() {
    let h = Harness::new("version_filter", |_| {}).await;
    let p = &h.provider;
    p.enqueue_for_orchestrator(common::harness::start("pinned"), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only("pinned").await;
    p.ack_orchestration_item(
        &token,
        1,
        vec![started_event("pinned")],
        vec![],
        vec![],
        ExecutionMetadata {
            pinned_duroxide_version: Some(Version::new(1, 4, 2)),
            ..running_metadata()
        },
        vec![],
    )
    .await
    .unwrap();
    p.enqueue_for_orchestrator(raised("pinned", "go"), None)
        .await
        .unwrap();

    let newer = range("2.0.0", "2.9.9");
    let got = p
        .fetch_orchestration_item(LONG, Duration::ZERO, Some(&newer))
        .await
        .unwrap();
    assert!(
        got.is_none(),
        "an execution pinned to 1.4.2 was handed to a 2.x-only dispatcher"
    );
    let exact = range("1.4.2", "1.4.2");
    let (item, _, _) = p
        .fetch_orchestration_item(LONG, Duration::ZERO, Some(&exact))
        .await
        .unwrap()
        .expect("a dispatcher whose range holds the pin gets the instance");
    assert_eq!(item.instance, "pinned");
    h.drop().await;
}

/// The claim checks the version of a candidate when it comes to try it, not for every
/// candidate it scans; a round that passed over instances of another version scans with
/// the check from then on. So thousands of instances pinned outside a dispatcher's range,
/// all older than its one instance, cost it one extra scan: without that switch each round
/// would pass over the next 64 of them and scan again (about 34 000 lease rows read here,
/// where the claim now reads about 2 000).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_of_other_versions_cannot_keep_a_dispatcher_from_its_own() {
    let h = Harness::new("version_crowd", |_| {}).await;
    h.create_instance("current").await;
    h.provider
        .enqueue_for_orchestrator(raised("current", "go"), None)
        .await
        .unwrap();
    h.exec(
        &format!(
            "SELECT S.enqueue_orchestrator(
                 array_agg('old-' || g),
                 array_agg('{{\"ExternalRaised\":{{\"instance\":\"old-' || g
                           || '\",\"name\":\"e\",\"data\":\"1\"}}}}'),
                 array_agg(NULL::float8), array_agg(NULL::float8))
             FROM generate_series(1, {OTHER_VERSION_INSTANCES}) AS g"
        ),
        None,
    )
    .await;
    for sql in [
        "INSERT INTO S.instances (instance_id, orchestration_name)
         SELECT l.instance_id, 'O' FROM S.instance_leases AS l WHERE l.instance_id LIKE 'old-%'",
        "INSERT INTO S.executions (instance_id, execution_id, pinned_major, pinned_minor,
                                   pinned_patch)
         SELECT l.instance_id, 1, 1, 4, 2 FROM S.instance_leases AS l
         WHERE l.instance_id LIKE 'old-%'",
        "UPDATE S.orchestrator_queue SET waiting = false,
                visible_at = clock_timestamp() - interval '1 hour'
         WHERE instance_id LIKE 'old-%'",
        "UPDATE S.instance_leases SET runnable_from = clock_timestamp() - interval '1 hour',
                ready_at = clock_timestamp() - interval '1 hour'
         WHERE instance_id LIKE 'old-%'",
    ] {
        h.exec(sql, None).await;
    }
    h.provider.close().await;
    let before = h.rows_read("instance_leases").await;

    let claimer = common::provider_with(common::options(&h.schema, PollingMode::Listen)).await;
    let (item, _, _) = claimer
        .fetch_orchestration_item(LONG, Duration::ZERO, Some(&range("2.0.0", "2.9.9")))
        .await
        .unwrap()
        .expect("the dispatcher's own instance, behind the others");
    assert_eq!(item.instance, "current");
    claimer.close().await;
    let read = h.rows_read("instance_leases").await - before;
    assert!(
        read < 3 * OTHER_VERSION_INSTANCES,
        "the claim read {read} lease rows past {OTHER_VERSION_INSTANCES} instances of another version"
    );
    h.drop().await;
}
