//! History, custom status, KV and stats reads (outside the runtime's hot path).

use std::collections::HashMap;

use duroxide::providers::ProviderError;
use duroxide::{Event, EventKind, SystemStats};
use sqlx::Row;

use crate::error::{codec_error, db_error};
use crate::provider::PostgresProvider;
use crate::run::{RunQuery, RunScalar};

/// Decode one execution's history; an undecodable event is an error, never skipped. The
/// claim reports it to the runtime through `history_error`, so its poison path can end the
/// instance; the reads return it as a permanent error.
pub(crate) fn decode_history(
    texts: &[String],
    instance: &str,
    execution_id: u64,
) -> Result<Vec<Event>, String> {
    texts
        .iter()
        .enumerate()
        .map(|(position, text)| {
            serde_json::from_str::<Event>(text).map_err(|e| {
                format!(
                    "failed to deserialize history event at position {position} of instance '{instance}' execution {execution_id}: {e}"
                )
            })
        })
        .collect()
}

impl PostgresProvider {
    /// Events of one execution; an undecodable event is an error, never skipped.
    pub(crate) async fn read_execution(
        &self,
        instance: &str,
        execution_id: u64,
        operation: &str,
    ) -> Result<Vec<Event>, ProviderError> {
        let texts: Vec<String> = self
            .scalar(&self.q.history_load)
            .bind(instance)
            .bind(i64::try_from(execution_id).unwrap_or(i64::MAX))
            .fetch_all_on(self, operation)
            .await?;
        decode_history(&texts, instance, execution_id)
            .map_err(|message| ProviderError::permanent(operation, message))
    }

    /// Events of the instance's latest execution, in one statement (a status read does
    /// this on every check).
    pub(crate) async fn read_latest_execution(
        &self,
        instance: &str,
        operation: &str,
    ) -> Result<Vec<Event>, ProviderError> {
        let rows = self
            .query(&self.q.history_load_latest)
            .bind(instance)
            .fetch_all_on(self, operation)
            .await?;
        let execution_id = match rows.first() {
            Some(row) => row
                .try_get::<i64, _>(0)
                .map_err(|e| db_error(operation, e))?,
            None => return Ok(Vec::new()),
        };
        let texts = rows
            .iter()
            .map(|row| row.try_get::<String, _>(1))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| db_error(operation, e))?;
        decode_history(&texts, instance, execution_id.max(0) as u64)
            .map_err(|message| ProviderError::permanent(operation, message))
    }

    pub(crate) async fn append_events(
        &self,
        instance: &str,
        execution_id: u64,
        events: Vec<Event>,
    ) -> Result<(), ProviderError> {
        const OP: &str = "append_with_execution";
        let mut tx = self.begin(OP).await?;
        self.append_history(&mut tx, instance, execution_id, &events, OP)
            .await?;
        tx.commit().await.map_err(|e| db_error(OP, e))
    }

    pub(crate) async fn custom_status(
        &self,
        instance: &str,
        last_seen_version: u64,
    ) -> Result<Option<(Option<String>, u64)>, ProviderError> {
        let row = self
            .query(&self.q.custom_status_get)
            .bind(instance)
            .bind(last_seen_version as i64)
            .fetch_optional_on(self, "get_custom_status")
            .await?;
        Ok(row.map(|r| (r.get(0), r.get::<i64, _>(1) as u64)))
    }

    pub(crate) async fn kv_value(
        &self,
        instance: &str,
        key: &str,
    ) -> Result<Option<String>, ProviderError> {
        let row = self
            .query(&self.q.kv_get)
            .bind(instance)
            .bind(key)
            .fetch_one_on(self, "get_kv_value")
            .await?;
        let in_delta: bool = row.get(0);
        Ok(if in_delta { row.get(1) } else { row.get(2) })
    }

    pub(crate) async fn kv_all(
        &self,
        instance: &str,
    ) -> Result<HashMap<String, String>, ProviderError> {
        let rows = self
            .query(&self.q.kv_get_all)
            .bind(instance)
            .fetch_all_on(self, "get_kv_all_values")
            .await?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    pub(crate) async fn stats(&self, instance: &str) -> Result<Option<SystemStats>, ProviderError> {
        const OP: &str = "get_instance_stats";
        let Some(row) = self
            .query(&self.q.instance_stats)
            .bind(instance)
            .fetch_optional_on(self, OP)
            .await?
        else {
            return Ok(None);
        };
        let first_event: Option<String> = row.get(5);
        let queue_pending_count = match first_event {
            Some(text) => {
                let event: Event = serde_json::from_str(&text)
                    .map_err(|e| codec_error(OP, "first history event", e))?;
                match event.kind {
                    EventKind::OrchestrationStarted {
                        carry_forward_events: Some(events),
                        ..
                    } => events.len() as u64,
                    _ => 0,
                }
            }
            None => 0,
        };
        Ok(Some(SystemStats {
            history_event_count: row.get::<i64, _>(1) as u64,
            history_size_bytes: row.get::<i64, _>(2) as u64,
            queue_pending_count,
            kv_user_key_count: row.get::<i64, _>(3) as u64,
            kv_total_value_bytes: row.get::<i64, _>(4) as u64,
        }))
    }

    /// Highest attempt count among an instance's orchestrator messages (0 if none).
    pub async fn max_attempt_count(&self, instance: &str) -> Result<u32, ProviderError> {
        let n: i32 = self
            .scalar(&self.q.max_attempt_count)
            .bind(instance)
            .fetch_one_on(self, "max_attempt_count")
            .await?;
        Ok(n.max(0) as u32)
    }
}
