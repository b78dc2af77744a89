//! The one delegating `Provider` layer: a wrapper that changes a few of another provider's
//! calls implements [`ProviderLayer`] (only [`ProviderLayer::inner`] is required; every other
//! method forwards to it unless overridden) and is handed to duroxide as [`Layered`].
//!
//! Forwarding is written once, here, for every method of duroxide's `Provider`, including
//! those with a default body in duroxide: a hand-written wrapper that forgot one of those
//! would silently answer with duroxide's default instead of the wrapped provider's.

use std::collections::HashMap;
use std::time::Duration;

use async_trait::async_trait;
use duroxide::providers::{
    DispatcherCapabilityFilter, ExecutionMetadata, OrchestrationItem, Provider, ProviderAdmin,
    ProviderError, ScheduledActivityIdentifier, SessionFetchConfig, TagFilter, WorkItem,
};
use duroxide::{Event, SystemStats};

/// A provider wrapped by a [`ProviderLayer`], as duroxide sees it.
pub struct Layered<L>(pub L);

/// Declares [`ProviderLayer`] with a forwarding default for each async method listed, and
/// implements `Provider` for [`Layered`] through it.
macro_rules! provider_layer {
    ($(fn $method:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {
        /// What a wrapper changes of the provider it wraps; see the module docs.
        // duroxide's ack_orchestration_item takes eight arguments.
        #[allow(clippy::too_many_arguments)]
        #[async_trait]
        pub trait ProviderLayer: Send + Sync + 'static {
            /// The wrapped provider.
            fn inner(&self) -> &dyn Provider;

            fn as_management_capability(&self) -> Option<&dyn ProviderAdmin> {
                self.inner().as_management_capability()
            }

            $(
                async fn $method(&self $(, $arg: $ty)*) -> $ret {
                    self.inner().$method($($arg),*).await
                }
            )*
        }

        #[allow(clippy::too_many_arguments)]
        #[async_trait]
        impl<L: ProviderLayer> Provider for Layered<L> {
            fn name(&self) -> &str {
                self.0.inner().name()
            }

            fn version(&self) -> &str {
                self.0.inner().version()
            }

            fn as_management_capability(&self) -> Option<&dyn ProviderAdmin> {
                self.0.as_management_capability()
            }

            $(
                async fn $method(&self $(, $arg: $ty)*) -> $ret {
                    ProviderLayer::$method(&self.0 $(, $arg)*).await
                }
            )*
        }
    };
}

provider_layer! {
    fn fetch_orchestration_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        filter: Option<&DispatcherCapabilityFilter>
    ) -> Result<Option<(OrchestrationItem, String, u32)>, ProviderError>;
    fn ack_orchestration_item(
        &self,
        lock_token: &str,
        execution_id: u64,
        history_delta: Vec<Event>,
        worker_items: Vec<WorkItem>,
        orchestrator_items: Vec<WorkItem>,
        metadata: ExecutionMetadata,
        cancelled_activities: Vec<ScheduledActivityIdentifier>
    ) -> Result<(), ProviderError>;
    fn abandon_orchestration_item(
        &self,
        lock_token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool
    ) -> Result<(), ProviderError>;
    fn renew_orchestration_item_lock(&self, token: &str, extend_for: Duration) -> Result<(), ProviderError>;
    fn enqueue_for_orchestrator(&self, item: WorkItem, delay: Option<Duration>) -> Result<(), ProviderError>;
    fn read(&self, instance: &str) -> Result<Vec<Event>, ProviderError>;
    fn read_with_execution(&self, instance: &str, execution_id: u64) -> Result<Vec<Event>, ProviderError>;
    fn append_with_execution(
        &self,
        instance: &str,
        execution_id: u64,
        new_events: Vec<Event>
    ) -> Result<(), ProviderError>;
    fn enqueue_for_worker(&self, item: WorkItem) -> Result<(), ProviderError>;
    fn fetch_work_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        session: Option<&SessionFetchConfig>,
        tag_filter: &TagFilter
    ) -> Result<Option<(WorkItem, String, u32)>, ProviderError>;
    fn ack_work_item(&self, token: &str, completion: Option<WorkItem>) -> Result<(), ProviderError>;
    fn abandon_work_item(
        &self,
        token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool
    ) -> Result<(), ProviderError>;
    fn renew_work_item_lock(&self, token: &str, extend_for: Duration) -> Result<(), ProviderError>;
    fn renew_session_lock(
        &self,
        owner_ids: &[&str],
        extend_for: Duration,
        idle_timeout: Duration
    ) -> Result<usize, ProviderError>;
    fn cleanup_orphaned_sessions(&self, idle_timeout: Duration) -> Result<usize, ProviderError>;
    fn get_custom_status(
        &self,
        instance: &str,
        last_seen_version: u64
    ) -> Result<Option<(Option<String>, u64)>, ProviderError>;
    fn get_kv_value(&self, instance: &str, key: &str) -> Result<Option<String>, ProviderError>;
    fn get_kv_all_values(&self, instance: &str) -> Result<HashMap<String, String>, ProviderError>;
    fn get_instance_stats(&self, instance: &str) -> Result<Option<SystemStats>, ProviderError>;
}

impl<L> std::ops::Deref for Layered<L> {
    type Target = L;

    fn deref(&self) -> &L {
        &self.0
    }
}
