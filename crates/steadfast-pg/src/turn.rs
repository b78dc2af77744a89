//! Writing one orchestration turn: everything an ack commits besides lease and queue
//! bookkeeping (instance and execution rows, history, status, custom status, KV, and the
//! messages the turn produces). Shared by the ordinary ack and the lease-independent
//! poison commit.

use duroxide::providers::{
    ExecutionMetadata, ProviderError, ScheduledActivityIdentifier, WorkItem,
};
use duroxide::{ErrorDetails, Event, EventKind, PoisonMessageType};
use sqlx::{Postgres, Transaction};

use crate::error::{codec_error, db_error};
use crate::orchestration::batch_kinds;
use crate::provider::PostgresProvider;

const ACK: &str = "ack_orchestration_item";

pub(crate) struct TurnWrite {
    pub execution_id: u64,
    pub history_delta: Vec<Event>,
    pub worker_items: Vec<WorkItem>,
    pub orchestrator_items: Vec<WorkItem>,
    pub metadata: ExecutionMetadata,
    pub cancelled: Vec<ScheduledActivityIdentifier>,
}

/// What a poison disposition carries, read from its `ErrorDetails::Poison`.
#[derive(Clone, Debug)]
pub(crate) struct PoisonDetails {
    pub attempt_count: u32,
    pub max_attempts: u32,
    pub message_kinds: String,
    pub display: String,
}

/// Poison details, if `details` is a poison disposition for the queue `activity` says.
/// An orchestration that fails because an activity was poisoned carries the activity's
/// poison details; that is an ordinary failure, not a disposition of its own messages.
fn poison_from(details: &ErrorDetails, activity: bool) -> Option<PoisonDetails> {
    match details {
        ErrorDetails::Poison {
            attempt_count,
            max_attempts,
            message,
            message_type,
        } if matches!(message_type, PoisonMessageType::Activity { .. }) == activity => {
            Some(PoisonDetails {
                attempt_count: *attempt_count,
                max_attempts: *max_attempts,
                message_kinds: serde_json::from_str::<Vec<WorkItem>>(message)
                    .map(|items| batch_kinds(&items))
                    .unwrap_or_else(|_| "unknown".to_string()),
                display: details.display_message(),
            })
        }
        _ => None,
    }
}

/// The poison details of an orchestration turn that fails its execution as poison.
pub(crate) fn poison_details(history_delta: &[Event]) -> Option<PoisonDetails> {
    history_delta.iter().find_map(|e| match &e.kind {
        EventKind::OrchestrationFailed { details } => poison_from(details, false),
        _ => None,
    })
}

/// The poison details of an activity completion that fails it as poison.
pub(crate) fn activity_poison_details(completion: &WorkItem) -> Option<PoisonDetails> {
    match completion {
        WorkItem::ActivityFailed { details, .. } => poison_from(details, true).map(|mut p| {
            p.message_kinds = "ActivityExecute".to_string();
            p
        }),
        _ => None,
    }
}

fn is_terminal(status: &str) -> bool {
    matches!(status, "Completed" | "Failed" | "ContinuedAsNew")
}

impl PostgresProvider {
    pub(crate) async fn write_turn(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
        turn: &TurnWrite,
    ) -> Result<(), ProviderError> {
        let q = &self.q;
        let exec = turn.execution_id as i64;
        let meta = &turn.metadata;

        if let (Some(name), Some(version)) = (&meta.orchestration_name, &meta.orchestration_version)
        {
            self.query(&q.instance_upsert)
                .bind(instance)
                .bind(name)
                .bind(version)
                .bind(exec)
                .bind(&meta.parent_instance_id)
                .execute(&mut **tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
        }
        self.query(&q.execution_ensure)
            .bind(instance)
            .bind(exec)
            .execute(&mut **tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        if let Some(v) = &meta.pinned_duroxide_version {
            let part = |x: u64| i32::try_from(x).unwrap_or(i32::MAX);
            self.query(&q.execution_pin_version)
                .bind(instance)
                .bind(exec)
                .bind(part(v.major))
                .bind(part(v.minor))
                .bind(part(v.patch))
                .execute(&mut **tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
        }
        self.query(&q.instance_advance_execution)
            .bind(instance)
            .bind(exec)
            .execute(&mut **tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        self.append_history(tx, instance, turn.execution_id, &turn.history_delta, ACK)
            .await?;
        if let Some(status) = &meta.status {
            self.query(&q.execution_set_status)
                .bind(instance)
                .bind(exec)
                .bind(status)
                .bind(&meta.output)
                .execute(&mut **tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
        }
        let custom_status = turn.history_delta.iter().rev().find_map(|e| match &e.kind {
            EventKind::CustomStatusUpdated { status } => Some(status.clone()),
            _ => None,
        });
        if let Some(status) = custom_status {
            self.query(&q.custom_status_set)
                .bind(instance)
                .bind(status)
                .execute(&mut **tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
        }
        for event in &turn.history_delta {
            let (key, value, at): (Option<&str>, Option<&str>, Option<i64>) = match &event.kind {
                EventKind::KeyValueSet {
                    key,
                    value,
                    last_updated_at_ms,
                } => (Some(key), Some(value), Some(*last_updated_at_ms as i64)),
                EventKind::KeyValueCleared { key } => (Some(key), None, None),
                EventKind::KeyValuesCleared => (None, None, None),
                _ => continue,
            };
            let statement = match key {
                Some(key) => self
                    .query(&q.kv_delta_set)
                    .bind(instance)
                    .bind(key)
                    .bind(value)
                    .bind(at),
                None => self.query(&q.kv_delta_clear_all).bind(instance),
            };
            statement
                .execute(&mut **tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
        }
        if meta.status.as_deref().is_some_and(is_terminal) {
            self.query(&q.kv_merge_on_terminal)
                .bind(instance)
                .execute(&mut **tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
        }
        self.enqueue_worker_items(tx, &turn.worker_items, ACK)
            .await?;
        if !turn.cancelled.is_empty() {
            let instances: Vec<&str> = turn.cancelled.iter().map(|a| a.instance.as_str()).collect();
            let executions: Vec<i64> = turn
                .cancelled
                .iter()
                .map(|a| a.execution_id as i64)
                .collect();
            let activities: Vec<i64> = turn
                .cancelled
                .iter()
                .map(|a| a.activity_id as i64)
                .collect();
            self.query(&q.worker_cancel)
                .bind(&instances)
                .bind(&executions)
                .bind(&activities)
                .execute(&mut **tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
        }
        self.enqueue_orchestrator_items(tx, &turn.orchestrator_items, None, ACK)
            .await
    }

    pub(crate) async fn append_history(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
        execution_id: u64,
        events: &[Event],
        operation: &str,
    ) -> Result<(), ProviderError> {
        if events.is_empty() {
            return Ok(());
        }
        let mut ids = Vec::with_capacity(events.len());
        let mut types = Vec::with_capacity(events.len());
        let mut texts = Vec::with_capacity(events.len());
        for event in events {
            if event.event_id == 0 {
                return Err(ProviderError::permanent(
                    operation,
                    "event_id must be set by the runtime",
                ));
            }
            let value = serde_json::to_value(event)
                .map_err(|e| codec_error(operation, "serialize event", e))?;
            types.push(
                value
                    .get("type")
                    .and_then(|t| t.as_str())
                    .unwrap_or("Unknown")
                    .to_string(),
            );
            texts.push(value.to_string());
            ids.push(event.event_id as i64);
        }
        self.query(&self.q.history_append)
            .bind(instance)
            .bind(execution_id as i64)
            .bind(&ids)
            .bind(&types)
            .bind(&texts)
            .execute(&mut **tx)
            .await
            .map_err(|e| {
                if crate::error::is_unique_violation(&e) {
                    ProviderError::permanent(
                        operation,
                        format!("duplicate event id in history of {instance}: {e}"),
                    )
                } else {
                    db_error(operation, e)
                }
            })?;
        Ok(())
    }
}
