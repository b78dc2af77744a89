//! The claim's version filter (duroxide's `DispatcherCapabilityFilter`): an instance whose
//! current execution is pinned outside a dispatcher's range is never handed to it, and is
//! to a dispatcher whose range holds the pin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::harness::{Harness, LONG, raised, running_metadata, started_event};

use std::time::Duration;

use duroxide::providers::{DispatcherCapabilityFilter, ExecutionMetadata, Provider, SemverRange};
use semver::Version;

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
