//! Terminal dispositions that do not depend on a live lease (the attempt ceiling, the
//! other one, is decided inside the claim statement: `functions/fail_stopped_instance.sql`):
//! - a poison ack whose lease has expired, committed keyed on (instance, generation,
//!   execution, attempt count) instead of the live lease; refused once its claim was
//!   released or superseded or its incarnation deleted (`fence.rs`).
//!
//! Poisoned messages always move to the dead-letter table; nothing is deleted.

use duroxide::providers::ProviderError;
use sqlx::{Postgres, Row, Transaction};

use crate::diagnostics::{Diagnostic, DiagnosticKind, QueueKind};
use crate::error::db_error;
use crate::fence::{self, LeaseSnapshot};
use crate::provider::PostgresProvider;
use crate::turn::{PoisonDetails, TurnWrite};

const FETCH: &str = "fetch_orchestration_item";
const ACK: &str = "ack_orchestration_item";

fn is_terminal(status: &str) -> bool {
    matches!(status, "Completed" | "Failed" | "ContinuedAsNew")
}

impl PostgresProvider {
    /// Move an instance's handed-out messages to the dead-letter table.
    pub(crate) async fn dead_letter_orchestration_messages(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
        execution_id: u64,
        details: &PoisonDetails,
        reason: &str,
    ) -> Result<u64, ProviderError> {
        let moved: i32 = self
            .scalar(&self.q.dead_letter_orch_messages)
            .bind(instance)
            .bind(execution_id as i64)
            .bind(details.max_attempts as i32)
            .bind(reason)
            .bind(&details.display)
            .fetch_one(&mut **tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        Ok(moved.max(0) as u64)
    }

    /// What every poison disposition commits, with or without a live lease: the
    /// instance's messages moved to dead letters, the disposition's turn written, the
    /// lease released. The turn is not written into an execution that already ended: the
    /// runtime decides poison from the attempt count before it reads the history, so a
    /// late message that keeps failing after its execution completed gets a disposition
    /// too, and that must not turn a completed execution into a failed one (found by the
    /// protocol model, docs/model.md); the caller, holding the lease row, says whether it
    /// has (`ended`). Returns how many messages moved and whether the turn was written.
    pub(crate) async fn commit_poison_disposition(
        &self,
        mut tx: Transaction<'static, Postgres>,
        instance: &str,
        turn: &TurnWrite,
        details: &PoisonDetails,
        ended: bool,
    ) -> Result<(u64, bool), ProviderError> {
        let moved = self
            .dead_letter_orchestration_messages(
                &mut tx,
                instance,
                turn.execution_id,
                details,
                "poison",
            )
            .await?;
        if !ended {
            self.write_turn(&mut tx, instance, turn).await?;
        }
        self.query(&self.q.orch_lease_release)
            .bind(instance)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        tx.commit().await.map_err(|e| db_error(ACK, e))?;
        Ok((moved, !ended))
    }

    /// Whether `execution_id` of `instance` has ended (Completed, Failed, ContinuedAsNew).
    pub(crate) async fn execution_ended(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
        execution_id: u64,
    ) -> Result<bool, ProviderError> {
        let status = self
            .query(&self.q.execution_state)
            .bind(instance)
            .bind(execution_id as i64)
            .fetch_optional(&mut **tx)
            .await
            .map_err(|e| db_error(ACK, e))?
            .and_then(|row| row.get::<Option<String>, _>(1));
        Ok(status.as_deref().is_some_and(is_terminal))
    }

    pub(crate) async fn dead_letter_undecodable(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        ids: &[i64],
        error: &str,
    ) -> Result<(), ProviderError> {
        self.query(&self.q.dead_letter_orch_by_ids)
            .bind(ids)
            .bind("undecodable")
            .bind(error)
            .execute(&mut **tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        tracing::error!(target: "steadfast_pg", event = "steadfast.undecodable_message", count = ids.len(), error, "dead-lettered orchestrator messages that cannot be decoded");
        Ok(())
    }

    /// Commit a poison ack whose lock token no longer holds a live lease: only while its
    /// claim is still the instance's latest (same generation, the lease still carries the
    /// token: expired, not released or superseded) and for the attempt that claim handed
    /// out; refused too when the execution is already terminal or has been replaced.
    /// Consumes `tx`.
    pub(crate) async fn commit_poison_without_lease(
        &self,
        mut tx: Transaction<'static, Postgres>,
        lock_token: &str,
        lease_state: &str,
        mut turn: TurnWrite,
        details: PoisonDetails,
    ) -> Result<(), ProviderError> {
        let execution_id = turn.execution_id;
        let lost = |instance: Option<&str>, reason: String| {
            let mut d = Diagnostic::new(
                DiagnosticKind::PoisonLost,
                QueueKind::Orchestrator,
                reason.clone(),
            )
            .execution(execution_id)
            .attempts(Some(details.attempt_count), Some(details.max_attempts))
            .message_kind(details.message_kinds.clone());
            if let Some(i) = instance {
                d = d.instance(i);
            }
            self.diagnostics.emit(d);
            ProviderError::permanent(ACK, format!("poison disposition not committed: {reason}"))
        };
        let Some(issued) = crate::token::issued(lock_token) else {
            return Err(lost(
                None,
                format!("lock token {lease_state} and not issued by steadfast"),
            ));
        };
        let instance = issued.instance.clone();
        let lease = self
            .query(&self.q.orch_lease_lock_by_instance)
            .bind(&instance)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        let snapshot = lease.as_ref().map(|row| LeaseSnapshot {
            token: row.get("lock_token"),
            generation: row.get("generation"),
        });
        if let Some(reason) = fence::incarnation_refusal(&issued, snapshot.as_ref()) {
            return Err(lost(Some(&instance), reason));
        }
        let state = self
            .query(&self.q.execution_state)
            .bind(&instance)
            .bind(execution_id as i64)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        if let Some(row) = state {
            let current = row.get::<i64, _>(0) as u64;
            let status: Option<String> = row.get(1);
            if current > execution_id {
                return Err(lost(
                    Some(&instance),
                    format!("execution {execution_id} was replaced by {current}"),
                ));
            }
            if let Some(s) = status.filter(|s| is_terminal(s)) {
                return Err(lost(
                    Some(&instance),
                    format!("execution {execution_id} is already terminal ({s})"),
                ));
            }
        }
        if let Some(reason) = snapshot
            .as_ref()
            .and_then(|lease| fence::claim_refusal(lock_token, lease))
        {
            return Err(lost(Some(&instance), reason));
        }
        let claimed_attempt = lease
            .as_ref()
            .map(|row| row.get::<i32, _>("attempt_count").max(0) as u32);
        if claimed_attempt != Some(details.attempt_count) {
            return Err(lost(
                Some(&instance),
                format!(
                    "the disposition is for attempt {}, but its claim handed out attempt {}",
                    details.attempt_count,
                    claimed_attempt.unwrap_or(0)
                ),
            ));
        }
        // The history may have grown since this turn's fetch; keep it append-only by
        // renumbering the disposition's events after whatever is there now.
        let next_id: i64 = self
            .scalar(&self.q.history_next_event_id)
            .bind(&instance)
            .bind(execution_id as i64)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        if turn
            .history_delta
            .first()
            .is_some_and(|e| (e.event_id as i64) < next_id)
        {
            for (offset, event) in turn.history_delta.iter_mut().enumerate() {
                event.event_id = next_id as u64 + offset as u64;
            }
        }
        // Not ended: a terminal execution was refused above, under the lease row's lock.
        let (moved, _) = self
            .commit_poison_disposition(tx, &instance, &turn, &details, false)
            .await?;
        self.diagnostics.emit(
            Diagnostic::new(
                DiagnosticKind::PoisonCommittedWithoutLease,
                QueueKind::Orchestrator,
                format!(
                    "lease {lease_state}; committed keyed on (instance, generation, execution {execution_id}, attempt {}) and moved {moved} message(s) to dead letters",
                    details.attempt_count
                ),
            )
            .instance(&instance)
            .execution(execution_id)
            .attempts(Some(details.attempt_count), Some(details.max_attempts))
            .message_kind(details.message_kinds.clone()),
        );
        Ok(())
    }
}
