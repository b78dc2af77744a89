//! The two queues, for tests that do the same to each.

use std::time::Duration;

use duroxide::providers::{Provider, TagFilter, WorkItem};
use steadfast_pg::PostgresProvider;

use super::harness::{LONG, activity_item, start};

#[derive(Clone, Copy, Debug)]
pub enum Queue {
    Orchestrator,
    Worker,
}

impl Queue {
    /// The `queue` label of the provider's metrics.
    pub fn label(self) -> &'static str {
        match self {
            Queue::Orchestrator => "orchestrator",
            Queue::Worker => "worker",
        }
    }

    /// Item `n` of this queue, for instance `instance` (orchestrator: a start of
    /// `instance-n`; worker: activity `n` of `instance`, untagged).
    pub fn item(self, instance: &str, n: u64) -> WorkItem {
        match self {
            Queue::Orchestrator => start(&format!("{instance}-{n}")),
            Queue::Worker => activity_item(instance, n),
        }
    }

    pub async fn enqueue(self, provider: &PostgresProvider, item: WorkItem) {
        match self {
            Queue::Orchestrator => provider.enqueue_for_orchestrator(item, None).await,
            Queue::Worker => provider.enqueue_for_worker(item).await,
        }
        .unwrap();
    }

    /// One fetch (untagged, no session, no version filter) polling up to `poll`: whether
    /// it got an item.
    pub async fn fetch(self, provider: &PostgresProvider, poll: Duration) -> bool {
        match self {
            Queue::Orchestrator => provider
                .fetch_orchestration_item(LONG, poll, None)
                .await
                .unwrap()
                .is_some(),
            Queue::Worker => provider
                .fetch_work_item(LONG, poll, None, &TagFilter::default())
                .await
                .unwrap()
                .is_some(),
        }
    }
}
