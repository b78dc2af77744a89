//! The dead-letter store: every poisoned or undecodable message, with its payload, the
//! instance, execution and attempt count, and why it was moved. List, read, requeue
//! (with a fresh attempt budget) and purge.

use duroxide::providers::{ProviderError, WorkItem};
use sqlx::Row;
use sqlx::postgres::PgRow;

use crate::diagnostics::QueueKind;
use crate::error::{codec_error, db_error};
use crate::provider::PostgresProvider;
use crate::run::RunQuery;
use crate::wake::Enqueued;

/// One dead-lettered message.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeadLetter {
    pub id: i64,
    pub queue: QueueKind,
    pub instance_id: String,
    pub execution_id: Option<u64>,
    pub activity_id: Option<u64>,
    /// How many times the message had been handed out.
    pub attempt_count: u32,
    pub max_attempts: Option<u32>,
    /// `poison`, `attempt_ceiling`, `undecodable`, `orphaned` (an orchestrator message
    /// to an instance that nothing started within `ClaimOptions::orphan_timeout`) or
    /// `history_too_large` (its instance's history is over `ClaimOptions::max_history_events`
    /// or `max_history_bytes`).
    pub reason: String,
    pub error: Option<String>,
    /// The original serialized work item.
    pub work_item: String,
    pub session_id: Option<String>,
    pub tag: Option<String>,
    pub enqueued_at_ms: i64,
    pub dead_at_ms: i64,
}

/// Which dead letters to list or purge.
#[derive(Clone, Debug, Default)]
pub struct DeadLetterFilter {
    /// Only this instance's dead letters.
    pub instance_id: Option<String>,
    /// List only: ids greater than this (keyset paging). Default 0.
    pub after_id: i64,
    /// List only: at most this many. Default 100.
    pub limit: Option<u32>,
    /// Purge only: only those dead before this time (ms since epoch).
    pub dead_before_ms: Option<u64>,
}

fn decode(row: &PgRow) -> DeadLetter {
    let queue: String = row.get(1);
    DeadLetter {
        id: row.get(0),
        queue: if queue == "worker" {
            QueueKind::Worker
        } else {
            QueueKind::Orchestrator
        },
        instance_id: row.get(2),
        execution_id: row.get::<Option<i64>, _>(3).map(|v| v as u64),
        activity_id: row.get::<Option<i64>, _>(4).map(|v| v as u64),
        attempt_count: row.get::<i32, _>(5).max(0) as u32,
        max_attempts: row.get::<Option<i32>, _>(6).map(|v| v.max(0) as u32),
        reason: row.get(7),
        error: row.get(8),
        work_item: row.get(9),
        session_id: row.get(10),
        tag: row.get(11),
        enqueued_at_ms: row.get(12),
        dead_at_ms: row.get(13),
    }
}

impl PostgresProvider {
    /// Dead letters in id order, filtered by instance, paged by `after_id`/`limit`.
    pub async fn list_dead_letters(
        &self,
        filter: &DeadLetterFilter,
    ) -> Result<Vec<DeadLetter>, ProviderError> {
        let rows = self
            .query(&self.q.dead_letters_list)
            .bind(&filter.instance_id)
            .bind(filter.after_id)
            .bind(i64::from(filter.limit.unwrap_or(100)))
            .fetch_all_on(self, "list_dead_letters")
            .await?;
        Ok(rows.iter().map(decode).collect())
    }

    pub async fn get_dead_letter(&self, id: i64) -> Result<Option<DeadLetter>, ProviderError> {
        let row = self
            .query(&self.q.dead_letter_get)
            .bind(id)
            .fetch_optional_on(self, "get_dead_letter")
            .await?;
        Ok(row.as_ref().map(decode))
    }

    /// Put a dead letter back on its queue as a new message (attempt count 0) and remove
    /// it from the store, atomically. Returns false if no such dead letter exists.
    pub async fn requeue_dead_letter(&self, id: i64) -> Result<bool, ProviderError> {
        const OP: &str = "requeue_dead_letter";
        let mut tx = self.begin(OP).await?;
        let Some(row) = self
            .query(&self.q.dead_letter_take)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(OP, e))?
        else {
            return Ok(false);
        };
        let letter = decode(&row);
        let item: WorkItem = serde_json::from_str(&letter.work_item)
            .map_err(|e| codec_error(OP, "dead letter payload is not a work item", e))?;
        match letter.queue {
            QueueKind::Worker => {
                self.enqueue_worker_items(&mut tx, std::slice::from_ref(&item), OP)
                    .await?
            }
            QueueKind::Orchestrator => {
                self.enqueue_orchestrator_items(&mut tx, std::slice::from_ref(&item), None, OP)
                    .await?
            }
        }
        tx.commit().await.map_err(|e| db_error(OP, e))?;
        self.enqueued(Enqueued::of(letter.queue));
        Ok(true)
    }

    /// Delete dead letters (optionally only one instance's, or only older ones).
    /// Returns how many were deleted.
    pub async fn purge_dead_letters(
        &self,
        filter: &DeadLetterFilter,
    ) -> Result<u64, ProviderError> {
        let done = self
            .query(&self.q.dead_letters_purge)
            .bind(&filter.instance_id)
            .bind(filter.dead_before_ms.map(|v| v as f64))
            .execute_on(self, "purge_dead_letters")
            .await?;
        Ok(done.rows_affected())
    }
}
