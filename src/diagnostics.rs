//! Diagnostics delivered to the JS `Runtime` (an EventEmitter).
//!
//! Two sources, never both for the same condition:
//! * PostgreSQL: steadfast-pg's `subscribe()` broadcast stream (it sees every poison
//!   disposition, lease loss, ceiling and rejected ack itself).
//! * SQLite: [`ObservedProvider`], the runtime's delegating `Provider` wrapper, recognises the
//!   runtime's poison acks (`OrchestrationFailed` / `ActivityFailed` with
//!   `ErrorDetails::Poison`) and reports whether they committed (`poisoned`) or failed
//!   (`poisonLost`). duroxide 0.1.32 discards the result of that ack, so this is the only
//!   place it can be seen.
//!
//! Events go to JS through a weak, non-blocking threadsafe function; the JS side catches
//! listener errors, so a throwing listener cannot take the process down.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use duroxide::providers::{
    DispatcherCapabilityFilter, ExecutionMetadata, OrchestrationItem, Provider, ProviderError,
    ScheduledActivityIdentifier, SessionFetchConfig, TagFilter, WorkItem,
};
use duroxide::{ErrorDetails, Event, PoisonMessageType};
use napi::Status;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde::Serialize;
use steadfast_pg::{Diagnostic, DiagnosticKind, ProviderLayer, QueueKind, poison_rule};
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinHandle;

use crate::event_loop::EventLoopWatch;
use crate::lifecycle::Lifecycle;
use crate::retried_turns::RetriedTurns;

/// The JS listener: receives one JSON-encoded [`DiagnosticEvent`], returns nothing.
pub(crate) type DiagnosticCallback = ThreadsafeFunction<String, (), String, Status, false, true>;

/// The payload of every diagnostic event (`kind` discriminates).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DiagnosticEvent {
    /// `poisoned`, `poisonLost`, `poisonCommittedWithoutLease`, `attemptCeilingEnforced`,
    /// `historyTooLarge`, `ackRejected`, `claimExhausted`, `messagesOrphaned` or
    /// `diagnosticsLagged`.
    pub kind: &'static str,
    /// `orchestrator` or `worker`.
    pub queue: &'static str,
    pub instance_id: Option<String>,
    pub execution_id: Option<u64>,
    pub attempt_count: Option<u32>,
    pub max_attempts: Option<u32>,
    pub message_kind: Option<String>,
    pub reason: String,
    /// Wall-clock ms since the epoch.
    pub at: u64,
    /// `provider` (steadfast-pg) or `runtime` (the binding's provider wrapper).
    pub source: &'static str,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl DiagnosticEvent {
    pub fn from_pg(d: &Diagnostic) -> Self {
        let kind = match d.kind {
            DiagnosticKind::PoisonCommitted => "poisoned",
            DiagnosticKind::PoisonCommittedWithoutLease => "poisonCommittedWithoutLease",
            DiagnosticKind::PoisonLost => "poisonLost",
            DiagnosticKind::AttemptCeilingEnforced => "attemptCeilingEnforced",
            DiagnosticKind::HistoryTooLarge => "historyTooLarge",
            DiagnosticKind::ClaimExhausted => "claimExhausted",
            DiagnosticKind::AckRejected => "ackRejected",
            DiagnosticKind::MessagesOrphaned => "messagesOrphaned",
        };
        Self {
            kind,
            queue: match d.queue {
                QueueKind::Orchestrator => "orchestrator",
                QueueKind::Worker => "worker",
            },
            instance_id: d.instance_id.clone(),
            execution_id: d.execution_id,
            attempt_count: d.attempt_count,
            max_attempts: d.max_attempts,
            message_kind: d.message_kind.clone(),
            reason: d.reason.clone(),
            at: d.at_ms,
            source: "provider",
        }
    }
}

/// Where events go. Without a callback (no JS listener registered) events are dropped.
#[derive(Clone, Default)]
pub(crate) struct DiagnosticSink {
    callback: Option<Arc<DiagnosticCallback>>,
}

impl DiagnosticSink {
    pub fn new(callback: Option<Arc<DiagnosticCallback>>) -> Self {
        Self { callback }
    }

    /// Send one event (a [`DiagnosticEvent`] or a lifecycle event) to JS as JSON.
    pub fn emit(&self, event: &impl Serialize) {
        if let Some(cb) = &self.callback
            && let Ok(json) = serde_json::to_string(event)
        {
            // Non-blocking: a full queue or a closing environment drops the event rather
            // than stalling a dispatcher.
            let _ = cb.call(json, ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// Forward steadfast-pg diagnostics until the provider is dropped or the task is aborted.
pub(crate) fn forward_pg(
    provider: &steadfast_pg::PostgresProvider,
    sink: DiagnosticSink,
) -> JoinHandle<()> {
    let mut rx = provider.subscribe();
    tokio::spawn(async move {
        loop {
            match rx.recv().await {
                Ok(d) => sink.emit(&DiagnosticEvent::from_pg(&d)),
                Err(RecvError::Lagged(n)) => sink.emit(&DiagnosticEvent {
                    kind: "diagnosticsLagged",
                    queue: "orchestrator",
                    instance_id: None,
                    execution_id: None,
                    attempt_count: None,
                    max_attempts: None,
                    message_kind: None,
                    reason: format!("{n} diagnostics were dropped: the listener fell behind"),
                    at: now_ms(),
                    source: "provider",
                }),
                Err(RecvError::Closed) => break,
            }
        }
    })
}

/// What a poison ack is about.
struct PoisonAck {
    queue: &'static str,
    instance: String,
    execution: u64,
    attempt_count: u32,
    max_attempts: u32,
    message_kind: String,
}

impl PoisonAck {
    /// `details`: a poison disposition of `queue`'s message, as steadfast-pg's poison rule
    /// recognised it.
    fn from_details(queue: &'static str, details: &ErrorDetails) -> Option<Self> {
        let ErrorDetails::Poison {
            attempt_count,
            max_attempts,
            message_type,
            ..
        } = details
        else {
            return None;
        };
        let (instance, execution, message_kind) = match message_type {
            PoisonMessageType::Orchestration {
                instance,
                execution_id,
            } => (instance.clone(), *execution_id, "orchestration".to_string()),
            PoisonMessageType::Activity {
                instance,
                execution_id,
                activity_name,
                ..
            } => (
                instance.clone(),
                *execution_id,
                format!("activity:{activity_name}"),
            ),
            PoisonMessageType::FailedDeserialization {
                instance,
                execution_id,
                ..
            } => (
                instance.clone(),
                *execution_id,
                "failedDeserialization".to_string(),
            ),
        };
        Some(Self {
            queue,
            instance,
            execution,
            attempt_count: *attempt_count,
            max_attempts: *max_attempts,
            message_kind,
        })
    }

    fn event(&self, result: &Result<(), ProviderError>) -> DiagnosticEvent {
        let (kind, reason) = match result {
            Ok(()) => ("poisoned", "poison disposition committed".to_string()),
            Err(e) => (
                "poisonLost",
                format!("poison disposition not committed: {e}"),
            ),
        };
        DiagnosticEvent {
            kind,
            queue: self.queue,
            instance_id: Some(self.instance.clone()),
            execution_id: Some(self.execution),
            attempt_count: Some(self.attempt_count),
            max_attempts: Some(self.max_attempts),
            message_kind: Some(self.message_kind.clone()),
            reason,
            at: now_ms(),
            source: "runtime",
        }
    }
}

fn orchestration_poison(delta: &[Event]) -> Option<PoisonAck> {
    poison_rule::orchestration_turn_poison(delta)
        .and_then(|d| PoisonAck::from_details("orchestrator", d))
}

fn activity_poison(completion: Option<&WorkItem>) -> Option<PoisonAck> {
    completion
        .and_then(poison_rule::activity_completion_poison)
        .and_then(|d| PoisonAck::from_details("worker", d))
}

/// The runtime's one delegating `Provider` layer: everything goes to `inner`, except that
/// while the JS event loop is stalled renewals and fetches are refused (see
/// [`EventLoopWatch`]), and, where `inner` does not report them itself (SQLite), poison
/// acks are reported.
pub(crate) struct ObservedProvider {
    inner: Arc<dyn Provider>,
    /// `None` when `inner` reports poison dispositions itself (steadfast-pg).
    poison_sink: Option<DiagnosticSink>,
    watch: Arc<EventLoopWatch>,
    retried: Arc<RetriedTurns>,
    lifecycle: Arc<Lifecycle>,
}

/// What the runtime's provider layer shares with the rest of the runtime.
pub(crate) struct Observers {
    pub watch: Arc<EventLoopWatch>,
    pub retried: Arc<RetriedTurns>,
    pub lifecycle: Arc<Lifecycle>,
}

impl ObservedProvider {
    pub fn new(
        inner: Arc<dyn Provider>,
        poison_sink: Option<DiagnosticSink>,
        observers: Observers,
    ) -> Self {
        Self {
            inner,
            poison_sink,
            watch: observers.watch,
            retried: observers.retried,
            lifecycle: observers.lifecycle,
        }
    }

    fn report(&self, poison: Option<PoisonAck>, result: &Result<(), ProviderError>) {
        if let (Some(sink), Some(p)) = (&self.poison_sink, poison) {
            sink.emit(&p.event(result));
        }
    }
}

#[async_trait]
impl ProviderLayer for ObservedProvider {
    fn inner(&self) -> &dyn Provider {
        &*self.inner
    }

    async fn fetch_orchestration_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        filter: Option<&DispatcherCapabilityFilter>,
    ) -> Result<Option<(OrchestrationItem, String, u32)>, ProviderError> {
        if self.watch.refuse_fetch() {
            return Ok(None);
        }
        let fetched = self
            .inner
            .fetch_orchestration_item(lock_timeout, poll_timeout, filter)
            .await?;
        match fetched {
            // A long poll that began before the stall: give the claim back uncounted.
            Some((_, token, _)) if self.watch.refuse_fetch() => {
                let _ = self
                    .inner
                    .abandon_orchestration_item(&token, None, true)
                    .await;
                Ok(None)
            }
            Some((item, token, attempt)) => {
                self.retried.claimed(&item.instance, attempt);
                Ok(Some((item, token, attempt)))
            }
            None => Ok(None),
        }
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
        let poison = orchestration_poison(&history_delta);
        let announced = self.lifecycle.turn_events(&history_delta);
        let result = self
            .inner
            .ack_orchestration_item(
                lock_token,
                execution_id,
                history_delta,
                worker_items,
                orchestrator_items,
                metadata,
                cancelled_activities,
            )
            .await;
        self.report(poison, &result);
        self.lifecycle.committed(announced, &result);
        result
    }

    async fn fetch_work_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        session: Option<&SessionFetchConfig>,
        tag_filter: &TagFilter,
    ) -> Result<Option<(WorkItem, String, u32)>, ProviderError> {
        if self.watch.refuse_fetch() {
            return Ok(None);
        }
        let fetched = self
            .inner
            .fetch_work_item(lock_timeout, poll_timeout, session, tag_filter)
            .await?;
        match fetched {
            Some((_, token, _)) if self.watch.refuse_fetch() => {
                let _ = self.inner.abandon_work_item(&token, None, true).await;
                Ok(None)
            }
            Some((item, token, attempt)) => {
                self.lifecycle.activity_fetched(&token, &item);
                Ok(Some((item, token, attempt)))
            }
            None => Ok(None),
        }
    }

    async fn ack_work_item(
        &self,
        token: &str,
        completion: Option<WorkItem>,
    ) -> Result<(), ProviderError> {
        self.watch.check_ack(token, completion.is_some())?;
        let poison = activity_poison(completion.as_ref());
        let announced = self.lifecycle.activity_ending(token, completion.as_ref());
        let result = self.inner.ack_work_item(token, completion).await;
        self.report(poison, &result);
        self.lifecycle.committed(announced, &result);
        result
    }

    async fn abandon_work_item(
        &self,
        token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool,
    ) -> Result<(), ProviderError> {
        self.lifecycle.activity_ending(token, None);
        self.inner
            .abandon_work_item(token, delay, ignore_attempt)
            .await
    }

    async fn renew_work_item_lock(
        &self,
        token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        self.watch
            .check_renewal("renew_work_item_lock", Some(token))?;
        self.inner.renew_work_item_lock(token, extend_for).await
    }

    async fn renew_session_lock(
        &self,
        owner_ids: &[&str],
        extend_for: Duration,
        idle_timeout: Duration,
    ) -> Result<usize, ProviderError> {
        self.watch.check_renewal("renew_session_lock", None)?;
        self.inner
            .renew_session_lock(owner_ids, extend_for, idle_timeout)
            .await
    }

    async fn renew_orchestration_item_lock(
        &self,
        token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        self.watch
            .check_renewal("renew_orchestration_item_lock", None)?;
        self.inner
            .renew_orchestration_item_lock(token, extend_for)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use duroxide::EventKind;

    fn poison_details() -> ErrorDetails {
        ErrorDetails::Poison {
            attempt_count: 4,
            max_attempts: 3,
            message_type: PoisonMessageType::Activity {
                instance: "i1".into(),
                execution_id: 1,
                activity_name: "Flaky".into(),
                activity_id: 2,
            },
            message: "{}".into(),
        }
    }

    #[test]
    fn activity_poison_is_recognised_and_reported_by_result() {
        let item = WorkItem::ActivityFailed {
            instance: "i1".into(),
            execution_id: 1,
            id: 2,
            details: poison_details(),
        };
        let p = activity_poison(Some(&item)).expect("poison");
        let ok = p.event(&Ok(()));
        assert_eq!(ok.kind, "poisoned");
        assert_eq!(ok.instance_id.as_deref(), Some("i1"));
        assert_eq!(ok.attempt_count, Some(4));
        assert_eq!(ok.message_kind.as_deref(), Some("activity:Flaky"));
        let lost = p.event(&Err(ProviderError::permanent("ack", "gone")));
        assert_eq!(lost.kind, "poisonLost");
        assert!(lost.reason.contains("gone"));
    }

    #[test]
    fn an_orchestration_failed_by_its_poisoned_activity_is_not_reported_again() {
        let event = Event {
            event_id: 5,
            source_event_id: None,
            instance_id: "i1".into(),
            execution_id: 1,
            timestamp_ms: 0,
            duroxide_version: "0.1.32".into(),
            kind: EventKind::OrchestrationFailed {
                details: poison_details(),
            },
        };
        assert!(orchestration_poison(std::slice::from_ref(&event)).is_none());
        let mut own = event;
        own.kind = EventKind::OrchestrationFailed {
            details: ErrorDetails::Poison {
                attempt_count: 11,
                max_attempts: 10,
                message_type: PoisonMessageType::Orchestration {
                    instance: "i1".into(),
                    execution_id: 1,
                },
                message: "[]".into(),
            },
        };
        let p = orchestration_poison(&[own]).expect("orchestration poison");
        assert_eq!(p.event(&Ok(())).queue, "orchestrator");
    }

    #[test]
    fn ordinary_failures_are_not_poison() {
        let item = WorkItem::ActivityFailed {
            instance: "i1".into(),
            execution_id: 1,
            id: 2,
            details: ErrorDetails::Application {
                kind: duroxide::AppErrorKind::ActivityFailed,
                message: "boom".into(),
                retryable: false,
            },
        };
        assert!(activity_poison(Some(&item)).is_none());
        assert!(activity_poison(None).is_none());
    }

    #[test]
    fn events_serialize_camel_case() {
        let p = activity_poison(Some(&WorkItem::ActivityFailed {
            instance: "i1".into(),
            execution_id: 1,
            id: 2,
            details: poison_details(),
        }))
        .unwrap();
        let json = serde_json::to_string(&p.event(&Ok(()))).unwrap();
        assert!(json.contains("\"instanceId\":\"i1\""), "{json}");
        assert!(json.contains("\"attemptCount\":4"), "{json}");
    }
}
