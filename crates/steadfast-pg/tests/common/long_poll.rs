//! Timings of the tests about waiting fetches, and a fetch left waiting.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use duroxide::providers::{DispatcherCapabilityFilter, OrchestrationItem, Provider};
use steadfast_pg::{PostgresProvider, ProviderOptions};
use tokio::task::JoinHandle;

use super::harness::{Harness, LONG};

/// Long enough that no fetch claims on the recheck timer during a test.
pub const RECHECK: Duration = Duration::from_secs(60);
/// The poll timeout of a waiting fetch.
pub const POLL: Duration = Duration::from_secs(20);
/// Far below `POLL` and `RECHECK`: a fetch that waited for either took longer.
pub const PROMPT: Duration = Duration::from_secs(5);

pub type FetchedOrchestration = Option<(OrchestrationItem, String, u32)>;

/// Fetches of a provider tuned with this wait for a wake-up or their poll timeout.
pub fn slow_recheck(options: &mut ProviderOptions) {
    options.claim.long_poll_recheck = RECHECK;
}

/// An orchestrator fetch on `h`'s provider with poll timeout `POLL`, started and found
/// still waiting.
pub async fn waiting_orchestrator_fetch(h: &Harness) -> JoinHandle<FetchedOrchestration> {
    waiting_orchestrator_fetch_on(h.provider.clone(), None).await
}

/// An orchestrator fetch on `provider` with `filter` and poll timeout `POLL`, started and
/// found still waiting.
pub async fn waiting_orchestrator_fetch_on(
    provider: Arc<PostgresProvider>,
    filter: Option<DispatcherCapabilityFilter>,
) -> JoinHandle<FetchedOrchestration> {
    let fetch = tokio::spawn(async move {
        provider
            .fetch_orchestration_item(LONG, POLL, filter.as_ref())
            .await
            .unwrap()
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!fetch.is_finished(), "the empty fetch waits");
    fetch
}
