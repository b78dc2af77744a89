//! Writing one orchestration turn: everything an ack commits besides lease and queue
//! bookkeeping (instance and execution rows, history, status, custom status, KV, and the
//! messages the turn produces). Shared by the ordinary ack and the lease-independent
//! poison commit.

use duroxide::providers::{
    ExecutionMetadata, ProviderError, ScheduledActivityIdentifier, WorkItem,
};
use duroxide::{ErrorDetails, Event, EventKind};
use sqlx::{Postgres, Transaction};

use crate::error::{codec_error, db_error};
use crate::orchestration::{OrchestratorRows, batch_kinds};
use crate::poison_rule;
use crate::provider::PostgresProvider;
use crate::run::PgQuery;
use crate::worker::WorkerRows;

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

impl PoisonDetails {
    /// From details the poison rule (`poison_rule.rs`) recognised.
    fn of(details: &ErrorDetails) -> Option<Self> {
        let ErrorDetails::Poison {
            attempt_count,
            max_attempts,
            message,
            ..
        } = details
        else {
            return None;
        };
        Some(Self {
            attempt_count: *attempt_count,
            max_attempts: *max_attempts,
            message_kinds: serde_json::from_str::<Vec<WorkItem>>(message)
                .map(|items| batch_kinds(&items))
                .unwrap_or_else(|_| "unknown".to_string()),
            display: details.display_message(),
        })
    }
}

/// The poison details of an orchestration turn that fails its execution as poison.
pub(crate) fn poison_details(history_delta: &[Event]) -> Option<PoisonDetails> {
    poison_rule::orchestration_turn_poison(history_delta).and_then(PoisonDetails::of)
}

/// The poison details of an activity completion that fails it as poison.
pub(crate) fn activity_poison_details(completion: &WorkItem) -> Option<PoisonDetails> {
    poison_rule::activity_completion_poison(completion)
        .and_then(PoisonDetails::of)
        .map(|mut p| {
            p.message_kinds = "ActivityExecute".to_string();
            p
        })
}

/// History events as the parallel arrays `append_history` takes: ids, types, JSON texts.
pub(crate) struct HistoryRows {
    ids: Vec<i64>,
    types: Vec<String>,
    texts: Vec<String>,
}

impl HistoryRows {
    pub(crate) fn new(events: &[Event], operation: &str) -> Result<Self, ProviderError> {
        let mut rows = Self {
            ids: Vec::with_capacity(events.len()),
            types: Vec::with_capacity(events.len()),
            texts: Vec::with_capacity(events.len()),
        };
        for event in events {
            if event.event_id == 0 {
                return Err(ProviderError::permanent(
                    operation,
                    "event_id must be set by the runtime",
                ));
            }
            let value = serde_json::to_value(event)
                .map_err(|e| codec_error(operation, "serialize event", e))?;
            rows.types.push(
                value
                    .get("type")
                    .and_then(|t| t.as_str())
                    .unwrap_or("Unknown")
                    .to_string(),
            );
            rows.texts.push(value.to_string());
            rows.ids.push(event.event_id as i64);
        }
        Ok(rows)
    }

    fn bind<'q>(&'q self, q: PgQuery<'q>) -> PgQuery<'q> {
        q.bind(&self.ids).bind(&self.types).bind(&self.texts)
    }
}

/// A turn as the bound parameters of `write_turn` / `ack_turn` (functions/ack_turn.sql) after
/// their first (the instance or the lock token), in order.
pub(crate) struct TurnParams {
    execution: i64,
    name: Option<String>,
    version: Option<String>,
    parent: Option<String>,
    pin: Option<Vec<i32>>,
    status: Option<String>,
    output: Option<String>,
    history: HistoryRows,
    custom_status: Option<Option<String>>,
    kv_keys: Vec<Option<String>>,
    kv_values: Vec<Option<String>>,
    kv_times: Vec<Option<i64>>,
    worker: WorkerRows,
    cancelled: (Vec<String>, Vec<i64>, Vec<i64>),
    orchestrator: OrchestratorRows,
}

impl TurnParams {
    pub(crate) fn new(turn: &TurnWrite, operation: &str) -> Result<Self, ProviderError> {
        let meta = &turn.metadata;
        let (name, version) = match (&meta.orchestration_name, &meta.orchestration_version) {
            (Some(n), Some(v)) => (Some(n.clone()), Some(v.clone())),
            _ => (None, None),
        };
        let part = |x: u64| i32::try_from(x).unwrap_or(i32::MAX);
        let (mut kv_keys, mut kv_values, mut kv_times) = (Vec::new(), Vec::new(), Vec::new());
        for event in &turn.history_delta {
            let (key, value, at) = match &event.kind {
                EventKind::KeyValueSet {
                    key,
                    value,
                    last_updated_at_ms,
                } => (
                    Some(key.clone()),
                    Some(value.clone()),
                    Some(*last_updated_at_ms as i64),
                ),
                EventKind::KeyValueCleared { key } => (Some(key.clone()), None, None),
                EventKind::KeyValuesCleared => (None, None, None),
                _ => continue,
            };
            kv_keys.push(key);
            kv_values.push(value);
            kv_times.push(at);
        }
        Ok(Self {
            execution: turn.execution_id as i64,
            name,
            version,
            parent: meta.parent_instance_id.clone(),
            pin: meta
                .pinned_duroxide_version
                .as_ref()
                .map(|v| vec![part(v.major), part(v.minor), part(v.patch)]),
            status: meta.status.clone(),
            output: meta.output.clone(),
            history: HistoryRows::new(&turn.history_delta, operation)?,
            custom_status: turn.history_delta.iter().rev().find_map(|e| match &e.kind {
                EventKind::CustomStatusUpdated { status } => Some(status.clone()),
                _ => None,
            }),
            kv_keys,
            kv_values,
            kv_times,
            worker: WorkerRows::new(&turn.worker_items, operation)?,
            cancelled: (
                turn.cancelled.iter().map(|a| a.instance.clone()).collect(),
                turn.cancelled
                    .iter()
                    .map(|a| a.execution_id as i64)
                    .collect(),
                turn.cancelled
                    .iter()
                    .map(|a| a.activity_id as i64)
                    .collect(),
            ),
            orchestrator: OrchestratorRows::new(&turn.orchestrator_items, None, operation)?,
        })
    }

    pub(crate) fn bind<'q>(&'q self, q: PgQuery<'q>) -> PgQuery<'q> {
        let q = q
            .bind(self.execution)
            .bind(&self.name)
            .bind(&self.version)
            .bind(&self.parent)
            .bind(&self.pin)
            .bind(&self.status)
            .bind(&self.output);
        let q = self
            .history
            .bind(q)
            .bind(self.custom_status.is_some())
            .bind(self.custom_status.clone().flatten())
            .bind(&self.kv_keys)
            .bind(&self.kv_values)
            .bind(&self.kv_times);
        let q = self
            .worker
            .bind(q)
            .bind(&self.cancelled.0)
            .bind(&self.cancelled.1)
            .bind(&self.cancelled.2);
        self.orchestrator.bind(q)
    }
}

impl PostgresProvider {
    /// Write a turn inside `tx`, whose caller holds the instance's lease row.
    pub(crate) async fn write_turn(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
        turn: &TurnWrite,
    ) -> Result<(), ProviderError> {
        let params = TurnParams::new(turn, ACK)?;
        params
            .bind(self.query(&self.q.turn_write).bind(instance))
            .execute(&mut **tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        Ok(())
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
        let rows = HistoryRows::new(events, operation)?;
        rows.bind(
            self.query(&self.q.history_append)
                .bind(instance)
                .bind(execution_id as i64),
        )
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
