//! `duroxide::providers::Provider` for [`PostgresProvider`]: thin delegation to the
//! modules that implement each concern.

use std::collections::HashMap;
use std::time::Duration;

use duroxide::providers::{
    DispatcherCapabilityFilter, ExecutionMetadata, OrchestrationItem, Provider, ProviderAdmin,
    ProviderError, ScheduledActivityIdentifier, SessionFetchConfig, TagFilter, WorkItem,
};
use duroxide::{Event, SystemStats};

use crate::diagnostics::QueueKind;
use crate::provider::PostgresProvider;
use crate::wake::Enqueued;

#[async_trait::async_trait]
impl Provider for PostgresProvider {
    fn name(&self) -> &str {
        "steadfast-pg"
    }

    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }

    async fn fetch_orchestration_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        filter: Option<&DispatcherCapabilityFilter>,
    ) -> Result<Option<(OrchestrationItem, String, u32)>, ProviderError> {
        let fetched = self
            .fetch_orchestration(lock_timeout, poll_timeout, filter)
            .await?;
        if let Some((_, _, attempts)) = &fetched {
            crate::metrics::redelivered(QueueKind::Orchestrator, *attempts);
        }
        Ok(fetched)
    }

    async fn ack_orchestration_item(
        &self,
        lock_token: &str,
        execution_id: u64,
        history_delta: Vec<Event>,
        worker_items: Vec<WorkItem>,
        orchestrator_items: Vec<WorkItem>,
        metadata: ExecutionMetadata,
        cancelled_activities: Vec<ScheduledActivityIdentifier>,
    ) -> Result<(), ProviderError> {
        self.ack_orchestration(
            lock_token,
            execution_id,
            history_delta,
            worker_items,
            orchestrator_items,
            metadata,
            cancelled_activities,
        )
        .await
    }

    async fn abandon_orchestration_item(
        &self,
        lock_token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool,
    ) -> Result<(), ProviderError> {
        self.abandon_orchestration(lock_token, delay, ignore_attempt)
            .await?;
        self.enqueued(Enqueued::ORCHESTRATOR);
        Ok(())
    }

    async fn read(&self, instance: &str) -> Result<Vec<Event>, ProviderError> {
        self.read_latest_execution(instance, "read").await
    }

    async fn read_with_execution(
        &self,
        instance: &str,
        execution_id: u64,
    ) -> Result<Vec<Event>, ProviderError> {
        self.read_execution(instance, execution_id, "read_with_execution")
            .await
    }

    async fn append_with_execution(
        &self,
        instance: &str,
        execution_id: u64,
        new_events: Vec<Event>,
    ) -> Result<(), ProviderError> {
        self.append_events(instance, execution_id, new_events).await
    }

    async fn enqueue_for_worker(&self, item: WorkItem) -> Result<(), ProviderError> {
        self.enqueue_worker(item).await?;
        self.enqueued(Enqueued::WORKER);
        Ok(())
    }

    async fn fetch_work_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        session: Option<&SessionFetchConfig>,
        tag_filter: &TagFilter,
    ) -> Result<Option<(WorkItem, String, u32)>, ProviderError> {
        let fetched = self
            .fetch_work(lock_timeout, poll_timeout, session, tag_filter)
            .await?;
        if let Some((_, _, attempts)) = &fetched {
            crate::metrics::redelivered(QueueKind::Worker, *attempts);
        }
        Ok(fetched)
    }

    async fn ack_work_item(
        &self,
        token: &str,
        completion: Option<WorkItem>,
    ) -> Result<(), ProviderError> {
        let enqueued = Enqueued::when(completion.is_some(), false);
        self.ack_work(token, completion).await?;
        self.enqueued(enqueued);
        Ok(())
    }

    async fn renew_work_item_lock(
        &self,
        token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        self.renew_work_lease(token, extend_for).await
    }

    async fn renew_session_lock(
        &self,
        owner_ids: &[&str],
        extend_for: Duration,
        idle_timeout: Duration,
    ) -> Result<usize, ProviderError> {
        self.renew_sessions(owner_ids, extend_for, idle_timeout)
            .await
    }

    async fn cleanup_orphaned_sessions(
        &self,
        _idle_timeout: Duration,
    ) -> Result<usize, ProviderError> {
        self.cleanup_sessions().await
    }

    async fn abandon_work_item(
        &self,
        token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool,
    ) -> Result<(), ProviderError> {
        self.abandon_work(token, delay, ignore_attempt).await?;
        self.enqueued(Enqueued::WORKER);
        Ok(())
    }

    async fn renew_orchestration_item_lock(
        &self,
        token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        self.renew_orchestration_lease(token, extend_for).await
    }

    async fn enqueue_for_orchestrator(
        &self,
        item: WorkItem,
        delay: Option<Duration>,
    ) -> Result<(), ProviderError> {
        self.enqueue_orchestrator(item, delay).await?;
        self.enqueued(Enqueued::ORCHESTRATOR);
        Ok(())
    }

    fn as_management_capability(&self) -> Option<&dyn ProviderAdmin> {
        Some(self)
    }

    async fn get_custom_status(
        &self,
        instance: &str,
        last_seen_version: u64,
    ) -> Result<Option<(Option<String>, u64)>, ProviderError> {
        self.custom_status(instance, last_seen_version).await
    }

    async fn get_kv_value(
        &self,
        instance: &str,
        key: &str,
    ) -> Result<Option<String>, ProviderError> {
        self.kv_value(instance, key).await
    }

    async fn get_kv_all_values(
        &self,
        instance: &str,
    ) -> Result<HashMap<String, String>, ProviderError> {
        self.kv_all(instance).await
    }

    async fn get_instance_stats(
        &self,
        instance: &str,
    ) -> Result<Option<SystemStats>, ProviderError> {
        self.stats(instance).await
    }
}
