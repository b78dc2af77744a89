//! Executions pinned to a duroxide version, and dispatchers' version ranges.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use duroxide::providers::{DispatcherCapabilityFilter, ExecutionMetadata, Provider, SemverRange};
use semver::Version;

use super::harness::{Harness, running_metadata, start, started_event};

/// A dispatcher that takes executions pinned from `min` to `max`.
pub fn range(min: &str, max: &str) -> DispatcherCapabilityFilter {
    DispatcherCapabilityFilter {
        supported_duroxide_versions: vec![SemverRange::new(
            Version::parse(min).unwrap(),
            Version::parse(max).unwrap(),
        )],
    }
}

pub fn pinned(version: Version) -> ExecutionMetadata {
    ExecutionMetadata {
        pinned_duroxide_version: Some(version),
        ..running_metadata()
    }
}

/// The version [`started_pinned`] pins to.
pub const PIN: &str = "1.4.2";

/// `instance` started, its execution 1 pinned to [`PIN`], nothing queued.
pub async fn started_pinned(h: &Harness, instance: &str) {
    let p = &h.provider;
    p.enqueue_for_orchestrator(start(instance), None)
        .await
        .unwrap();
    let (_, token, _) = h.fetch_only(instance).await;
    p.ack_orchestration_item(
        &token,
        1,
        vec![started_event(instance)],
        vec![],
        vec![],
        pinned(Version::parse(PIN).unwrap()),
        vec![],
    )
    .await
    .unwrap();
}
