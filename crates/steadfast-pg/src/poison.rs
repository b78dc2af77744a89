//! Terminal dispositions that do not depend on a live lease:
//! - the attempt ceiling, enforced inside the claim itself;
//! - a poison ack whose lease has expired, been released or been superseded, committed
//!   keyed on (instance, execution, attempt count) instead of the lock token.
//!
//! Poisoned messages always move to the dead-letter table; nothing is deleted.

use duroxide::providers::{ExecutionMetadata, ProviderError, WorkItem};
use duroxide::{ErrorDetails, Event, EventKind, PoisonMessageType};
use sqlx::{Postgres, Row, Transaction};

use crate::diagnostics::{Diagnostic, DiagnosticKind, QueueKind};
use crate::error::db_error;
use crate::orchestration::batch_kinds;
use crate::provider::PostgresProvider;
use crate::turn::{PoisonDetails, TurnWrite};

const FETCH: &str = "fetch_orchestration_item";
const ACK: &str = "ack_orchestration_item";

fn is_terminal(status: &str) -> bool {
    matches!(status, "Completed" | "Failed" | "ContinuedAsNew")
}

/// Parent link of a sub-orchestration: (parent instance, parent execution, parent event id).
type ParentLink = (String, Option<u64>, u64);

fn parent_link_of(event: &Event) -> Option<ParentLink> {
    match &event.kind {
        EventKind::OrchestrationStarted {
            parent_instance: Some(parent),
            parent_id: Some(id),
            parent_execution_id,
            ..
        } => Some((parent.clone(), *parent_execution_id, *id)),
        _ => None,
    }
}

/// The `OrchestrationStarted` event a batch's start (or continue-as-new) message implies.
fn started_event(
    instance: &str,
    execution_id: u64,
    version: &str,
    start: &WorkItem,
) -> Option<Event> {
    let kind = match start {
        WorkItem::StartOrchestration {
            orchestration,
            input,
            parent_instance,
            parent_id,
            parent_execution_id,
            ..
        } => EventKind::OrchestrationStarted {
            name: orchestration.clone(),
            version: version.to_string(),
            input: input.clone(),
            parent_instance: parent_instance.clone(),
            parent_id: *parent_id,
            parent_execution_id: *parent_execution_id,
            carry_forward_events: None,
            initial_custom_status: None,
        },
        WorkItem::ContinueAsNew {
            orchestration,
            input,
            parent_instance,
            parent_id,
            parent_execution_id,
            carry_forward_events,
            initial_custom_status,
            ..
        } => EventKind::OrchestrationStarted {
            name: orchestration.clone(),
            version: version.to_string(),
            input: input.clone(),
            parent_instance: parent_instance.clone(),
            parent_id: *parent_id,
            parent_execution_id: *parent_execution_id,
            carry_forward_events: Some(carry_forward_events.clone()),
            initial_custom_status: initial_custom_status.clone(),
        },
        _ => return None,
    };
    Some(Event::with_event_id(1, instance, execution_id, None, kind))
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
        let moved = self
            .query(&self.q.dead_letter_orch_messages)
            .bind(instance)
            .bind(execution_id as i64)
            .bind(details.max_attempts as i32)
            .bind(reason)
            .bind(&details.display)
            .fetch_all(&mut **tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        Ok(moved.len() as u64)
    }

    /// What every poison disposition commits, with or without a live lease: the
    /// instance's messages moved to dead letters, the disposition's turn written, the
    /// lease released. Returns how many messages moved.
    pub(crate) async fn commit_poison_disposition(
        &self,
        mut tx: Transaction<'static, Postgres>,
        instance: &str,
        turn: &TurnWrite,
        details: &PoisonDetails,
    ) -> Result<u64, ProviderError> {
        let moved = self
            .dead_letter_orchestration_messages(
                &mut tx,
                instance,
                turn.execution_id,
                details,
                "poison",
            )
            .await?;
        self.write_turn(&mut tx, instance, turn).await?;
        self.query(&self.q.orch_lease_release)
            .bind(instance)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        tx.commit().await.map_err(|e| db_error(ACK, e))?;
        Ok(moved)
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

    /// The claim found a message that was already handed out `max_attempts + 1` times:
    /// fail the instance as poison here (same event shape as the runtime's), dead-letter
    /// its messages and release the lease. Commits `tx`.
    pub(crate) async fn enforce_orchestration_ceiling(
        &self,
        mut tx: Transaction<'static, Postgres>,
        instance: &str,
        token: &str,
        messages: &[WorkItem],
        max_attempts: u32,
    ) -> Result<(), ProviderError> {
        let q = &self.q;
        let handed_out = max_attempts.saturating_add(1);
        // Give back this claim's increment: the dead letters record hand-outs.
        self.query(&q.orch_abandon_messages)
            .bind(token)
            .bind(None::<f64>)
            .bind(true)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        let meta = self
            .query(&q.orch_instance_load)
            .bind(instance)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        let (name, version, mut execution_id) = match &meta {
            Some(row) => (
                Some(row.get::<String, _>(0)),
                row.get::<Option<String>, _>(1),
                row.get::<i64, _>(2) as u64,
            ),
            None => (None, None, 1),
        };
        let status = self
            .execution_status(&mut tx, instance, execution_id)
            .await?;
        let successor = messages
            .iter()
            .find(|m| matches!(m, WorkItem::ContinueAsNew { .. }));
        if status.as_deref() == Some("ContinuedAsNew") && successor.is_some() {
            // The batch belongs to the next execution, which fails as its own execution.
            execution_id += 1;
        }
        let status = self
            .execution_status(&mut tx, instance, execution_id)
            .await?;
        let start = successor.or_else(|| {
            messages
                .iter()
                .find(|m| matches!(m, WorkItem::StartOrchestration { .. }))
        });
        let (name, version) = match (name, start) {
            (Some(n), _) => (n, version.unwrap_or_else(|| "unknown".into())),
            (None, Some(s)) => match crate::orchestration::start_of(std::slice::from_ref(s)) {
                Some((n, v)) => (n, v.unwrap_or_else(|| "unknown".into())),
                None => ("unknown".into(), "unknown".into()),
            },
            (None, None) => ("unknown".into(), "unknown".into()),
        };
        let error = ErrorDetails::Poison {
            attempt_count: handed_out,
            max_attempts,
            message_type: PoisonMessageType::Orchestration {
                instance: instance.to_string(),
                execution_id,
            },
            message: serde_json::to_string(messages).unwrap_or_default(),
        };
        let details = PoisonDetails {
            attempt_count: handed_out,
            max_attempts,
            message_kinds: batch_kinds(messages),
            display: error.display_message(),
        };
        let moved = self
            .dead_letter_orchestration_messages(
                &mut tx,
                instance,
                execution_id,
                &details,
                "attempt_ceiling",
            )
            .await?;
        let can_fail =
            !status.as_deref().is_some_and(is_terminal) && (meta.is_some() || start.is_some());
        if can_fail {
            let next_id: i64 = self
                .scalar(&q.history_next_event_id)
                .bind(instance)
                .bind(execution_id as i64)
                .fetch_one(&mut *tx)
                .await
                .map_err(|e| db_error(FETCH, e))?;
            let mut delta = Vec::new();
            let mut parent = None;
            if next_id == 1 {
                if let Some(started) =
                    start.and_then(|s| started_event(instance, execution_id, &version, s))
                {
                    parent = parent_link_of(&started);
                    delta.push(started);
                }
            } else if let Ok(history) = self.load_history(&mut tx, instance, execution_id).await? {
                parent = history.first().and_then(parent_link_of);
            }
            let failed_id = (next_id as u64).max(delta.len() as u64 + 1);
            delta.push(Event::with_event_id(
                failed_id,
                instance,
                execution_id,
                None,
                EventKind::OrchestrationFailed {
                    details: error.clone(),
                },
            ));
            let orchestrator_items = match &parent {
                Some((parent_instance, parent_execution_id, parent_id)) => {
                    let parent_execution_id = match parent_execution_id {
                        Some(e) => *e,
                        None => self.current_execution_of(&mut tx, parent_instance).await?,
                    };
                    vec![WorkItem::SubOrchFailed {
                        parent_instance: parent_instance.clone(),
                        parent_execution_id,
                        parent_id: *parent_id,
                        details: error.clone(),
                    }]
                }
                None => Vec::new(),
            };
            let turn = TurnWrite {
                execution_id,
                history_delta: delta,
                worker_items: Vec::new(),
                orchestrator_items,
                metadata: ExecutionMetadata {
                    status: Some("Failed".into()),
                    output: Some(error.display_message()),
                    orchestration_name: Some(name),
                    orchestration_version: Some(version),
                    parent_instance_id: parent.as_ref().map(|(p, _, _)| p.clone()),
                    pinned_duroxide_version: None,
                },
                cancelled: Vec::new(),
            };
            self.write_turn(&mut tx, instance, &turn).await?;
        }
        self.query(&q.orch_lease_release)
            .bind(instance)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        tx.commit().await.map_err(|e| db_error(FETCH, e))?;
        let outcome = if can_fail {
            "failed the execution as poison"
        } else {
            "execution already terminal; dead-lettered only"
        };
        self.diagnostics.emit(
            Diagnostic::new(
                DiagnosticKind::AttemptCeilingEnforced,
                QueueKind::Orchestrator,
                format!("message handed out {handed_out} times; the claim {outcome} and moved {moved} message(s) to dead letters"),
            )
            .instance(instance)
            .execution(execution_id)
            .attempts(Some(handed_out), Some(max_attempts))
            .message_kind(details.message_kinds),
        );
        Ok(())
    }

    /// Commit a poison ack whose lock token no longer holds a live lease. Refused only
    /// when the execution is already terminal or has been replaced. Consumes `tx`.
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
        let Some(instance) = crate::token::token_instance(lock_token) else {
            return Err(lost(
                None,
                format!("lock token {lease_state} and not issued by steadfast"),
            ));
        };
        let lease = self
            .query(&self.q.orch_lease_lock_by_instance)
            .bind(&instance)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        if lease.is_none() {
            return Err(lost(Some(&instance), "instance was deleted".into()));
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
        let moved = self
            .commit_poison_disposition(tx, &instance, &turn, &details)
            .await?;
        self.diagnostics.emit(
            Diagnostic::new(
                DiagnosticKind::PoisonCommittedWithoutLease,
                QueueKind::Orchestrator,
                format!(
                    "lease {lease_state}; committed keyed on (instance, execution {execution_id}, attempt {}) and moved {moved} message(s) to dead letters",
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

    async fn execution_status(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
        execution_id: u64,
    ) -> Result<Option<String>, ProviderError> {
        let row = self
            .query(&self.q.execution_state)
            .bind(instance)
            .bind(execution_id as i64)
            .fetch_optional(&mut **tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        Ok(row.and_then(|r| r.get::<Option<String>, _>(1)))
    }

    async fn current_execution_of(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
    ) -> Result<u64, ProviderError> {
        let row = self
            .query(&self.q.execution_state)
            .bind(instance)
            .bind(0i64)
            .fetch_optional(&mut **tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        Ok(row.map(|r| r.get::<i64, _>(0) as u64).unwrap_or(1))
    }
}
