//! The orchestrator queue: ack, abandon, lease renewal and enqueue. The claim (fetch) is
//! in `claim.rs`.
//!
//! Every writer of an instance's queue rows (claim, ack, abandon, deletion, poison) holds
//! the instance's lease row lock, so holding it means no one else is touching those rows.

use std::time::Duration;

use duroxide::Event;
use duroxide::providers::{
    ExecutionMetadata, ProviderError, ScheduledActivityIdentifier, WorkItem,
};
use sqlx::{Postgres, Row, Transaction};

use crate::diagnostics::{Diagnostic, DiagnosticKind, QueueKind};
use crate::error::{codec_error, db_error};
use crate::handoff::{HandoffColumns, hand_over};
use crate::provider::PostgresProvider;
use crate::run::{PgQuery, RunQuery, RunScalar};
use crate::turn::{PoisonDetails, TurnParams, TurnWrite, poison_details};
use crate::wake::Enqueued;

const ACK: &str = "ack_orchestration_item";

pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl PostgresProvider {
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn ack_orchestration(
        &self,
        lock_token: &str,
        execution_id: u64,
        history_delta: Vec<Event>,
        worker_items: Vec<WorkItem>,
        orchestrator_items: Vec<WorkItem>,
        metadata: ExecutionMetadata,
        cancelled: Vec<ScheduledActivityIdentifier>,
    ) -> Result<(), ProviderError> {
        let poison = poison_details(&history_delta);
        let ends = metadata.status.as_deref().is_some_and(|s| s != "Running");
        let turn = TurnWrite {
            execution_id,
            history_delta,
            worker_items,
            orchestrator_items,
            metadata,
            cancelled,
        };
        let Some(details) = poison else {
            // An ordinary ack: one statement (ack_turn_handing_off) that writes only with a
            // live lease, retried through transient errors while the lease may live
            // (`lease_book.rs`), handing activities to waiting fetches (`handoff.rs`).
            let params = TurnParams::new(&turn, ACK)?;
            let reserved = self.handoffs.reserve(&turn.worker_items, &turn.cancelled);
            let handoff = HandoffColumns::of(&reserved);
            let lease_left = self.leases.take_remaining(lock_token);
            let row = crate::transient::retry_while_lease_may_live(lease_left, || {
                handoff
                    .bind(params.bind(self.query(&self.q.turn_ack).bind(lock_token)))
                    .fetch_one_on(self, ACK)
            })
            .await?;
            let state: String = row.get("state");
            return match state.as_str() {
                "ok" => {
                    let handed = hand_over(
                        reserved,
                        &turn.worker_items,
                        row.get("handed"),
                        &self.worker_give_back,
                    );
                    let unhanded = turn.worker_items.len() - handed;
                    let enqueued =
                        Enqueued::when(!turn.orchestrator_items.is_empty(), unhanded > 0);
                    // Session activities go to their owners' fetches (`session_wakes.rs`):
                    // when each was woken, no other worker fetch here needs to be.
                    let owners_woken = self.wakes().wake_owners_of(&turn.worker_items);
                    let woken = Enqueued::when(false, unhanded > 0 && owners_woken == unhanded);
                    self.turn_committed(lock_token, enqueued, woken, ends);
                    Ok(())
                }
                "expired" => Err(self.ack_rejected(lock_token, execution_id, "expired").await),
                _ => Err(self
                    .ack_rejected(lock_token, execution_id, "unknown or superseded")
                    .await),
            };
        };
        let enqueued = Enqueued::when(
            !turn.orchestrator_items.is_empty(),
            !turn.worker_items.is_empty(),
        );
        self.leases.forget(lock_token);
        self.ack_poison(lock_token, turn, details).await?;
        // Failing the execution may have notified its parent.
        self.turn_committed(
            lock_token,
            enqueued.and(Enqueued::ORCHESTRATOR),
            Enqueued::NONE,
            true,
        );
        Ok(())
    }

    /// A turn's write committed: wake fetches of the queues it enqueued on (but those of
    /// `woken`, whose work's takers were woken already), and waiters for its instance if
    /// it ended the execution (`wake.rs`).
    fn turn_committed(&self, lock_token: &str, enqueued: Enqueued, woken: Enqueued, ended: bool) {
        self.turn_acked();
        self.wakes().enqueued_woken_but(enqueued, woken);
        if ended && let Some(instance) = crate::token::token_instance(lock_token) {
            self.announce_end(&instance);
        }
    }

    async fn ack_rejected(
        &self,
        lock_token: &str,
        execution_id: u64,
        state: &str,
    ) -> ProviderError {
        let stale = self.older_incarnation(lock_token).await;
        let reason = match &stale {
            Some(why) => format!("lock token {state}: {why}; the turn was not committed"),
            None => format!("lock token {state}; the turn was not committed"),
        };
        // Best effort: the diagnostic is still emitted if this read fails.
        let attempt_count = match self
            .query(&self.q.orch_lease_attempts_by_token)
            .bind(lock_token)
            .fetch_optional_on(self, ACK)
            .await
        {
            Ok(Some(row)) => Some(row.get::<i32, _>(0).max(0) as u32),
            _ => None,
        };
        let mut d = Diagnostic::new(
            DiagnosticKind::AckRejected,
            QueueKind::Orchestrator,
            reason.clone(),
        )
        .execution(execution_id)
        .attempts(attempt_count, self.options.claim.max_attempts);
        if let Some(i) = crate::token::token_instance(lock_token) {
            d = d.instance(&i);
        }
        self.diagnostics.emit(d);
        ProviderError::permanent(ACK, format!("Invalid lock token: {reason}"))
    }

    /// Whether a refused token is of an older incarnation of its instance, and so says
    /// (`fence::older_incarnation`). Best effort: `None` when the read fails.
    async fn older_incarnation(&self, lock_token: &str) -> Option<String> {
        let issued = crate::token::issued(lock_token)?;
        issued.generation?;
        let current: Option<i64> = self
            .scalar(&self.q.orch_lease_generation)
            .bind(&issued.instance)
            .fetch_optional_on(self, ACK)
            .await
            .ok()?;
        crate::fence::older_incarnation(&issued, current)
    }

    /// The `AckRejected` diagnostic of a renewal or abandon refused because its token is
    /// of an older incarnation (other refusals of those are ordinary: an expired lease).
    async fn refuse_if_older_incarnation(&self, lock_token: &str, operation: &str) {
        let Some(why) = self.older_incarnation(lock_token).await else {
            return;
        };
        let mut d = Diagnostic::new(
            DiagnosticKind::AckRejected,
            QueueKind::Orchestrator,
            format!("{operation} refused: {why}"),
        );
        if let Some(i) = crate::token::token_instance(lock_token) {
            d = d.instance(&i);
        }
        self.diagnostics.emit(d);
    }

    /// A turn carrying the runtime's poison disposition: with a live lease its messages
    /// are dead-lettered with the turn; with an expired one it still commits, keyed on
    /// (instance, generation, execution, attempt count) — see `commit_poison_without_lease`.
    async fn ack_poison(
        &self,
        lock_token: &str,
        turn: TurnWrite,
        details: PoisonDetails,
    ) -> Result<(), ProviderError> {
        let execution_id = turn.execution_id;
        let mut tx = self.begin(ACK).await?;
        let lease = self
            .query(&self.q.orch_lease_lock_by_token)
            .bind(lock_token)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        let live_instance = match &lease {
            Some(row) if row.get::<Option<bool>, _>(1) == Some(true) => {
                Some(row.get::<String, _>(0))
            }
            _ => None,
        };
        let Some(instance) = live_instance else {
            let state = if lease.is_some() {
                "expired"
            } else {
                "unknown or superseded"
            };
            return self
                .commit_poison_without_lease(tx, lock_token, state, turn, details)
                .await;
        };
        let ended = self
            .execution_ended(&mut tx, &instance, turn.execution_id)
            .await?;
        let (_, written) = self
            .commit_poison_disposition(tx, &instance, &turn, &details, ended)
            .await?;
        let what = if written {
            "poison disposition committed with a live lease"
        } else {
            "poison disposition for an execution already terminal: its messages were dead-lettered, the execution left as it ended"
        };
        self.diagnostics.emit(
            Diagnostic::new(
                DiagnosticKind::PoisonCommitted,
                QueueKind::Orchestrator,
                what,
            )
            .instance(&instance)
            .execution(execution_id)
            .attempts(Some(details.attempt_count), Some(details.max_attempts))
            .message_kind(details.message_kinds.clone()),
        );
        Ok(())
    }

    pub(crate) async fn abandon_orchestration(
        &self,
        lock_token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool,
    ) -> Result<(), ProviderError> {
        const OP: &str = "abandon_orchestration_item";
        self.leases.forget(lock_token);
        let mut tx = self.begin(OP).await?;
        let lease = self
            .query(&self.q.orch_lease_lock_by_token)
            .bind(lock_token)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(OP, e))?;
        let Some(lease) = lease else {
            drop(tx);
            self.refuse_if_older_incarnation(lock_token, OP).await;
            return Err(ProviderError::permanent(OP, "Invalid lock token"));
        };
        let instance: String = lease.get(0);
        self.query(&self.q.orch_abandon_messages)
            .bind(lock_token)
            .bind(delay.map(millis))
            .bind(ignore_attempt)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(OP, e))?;
        self.query(&self.q.orch_lease_release)
            .bind(&instance)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(OP, e))?;
        tx.commit().await.map_err(|e| db_error(OP, e))
    }

    pub(crate) async fn renew_orchestration_lease(
        &self,
        lock_token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        crate::transient::retry_while_lease_may_live(extend_for, || {
            self.try_renew_orchestration_lease(lock_token, extend_for)
        })
        .await?;
        self.leases.stamped(lock_token, extend_for);
        Ok(())
    }

    async fn try_renew_orchestration_lease(
        &self,
        lock_token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        const OP: &str = "renew_orchestration_item_lock";
        let deadline = self.options.claim.max_turn_duration;
        let row = self
            .query(&self.q.orch_lease_renew)
            .bind(lock_token)
            .bind(millis(extend_for))
            .bind(deadline.map(millis))
            .fetch_one_on(self, OP)
            .await?;
        if !row.get::<bool, _>("renewed") {
            if row.get::<bool, _>("past_deadline") {
                return Err(crate::deadline::reached(
                    OP,
                    "turn",
                    "claim.max_turn_duration",
                    deadline,
                    crate::token::token_instance(lock_token).as_deref(),
                ));
            }
            self.refuse_if_older_incarnation(lock_token, OP).await;
            return Err(ProviderError::permanent(
                OP,
                "Lock token invalid, expired, or already acked",
            ));
        }
        Ok(())
    }

    pub(crate) async fn enqueue_orchestrator_items(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        items: &[WorkItem],
        delay: Option<Duration>,
        operation: &str,
    ) -> Result<(), ProviderError> {
        if items.is_empty() {
            return Ok(());
        }
        let rows = OrchestratorRows::new(items, delay, operation)?;
        rows.bind(self.query(&self.q.orch_enqueue))
            .execute(&mut **tx)
            .await
            .map_err(|e| db_error(operation, e))?;
        Ok(())
    }

    /// One statement: atomic without an explicit transaction. A start of an instance that
    /// has not run is watched for its end from before it is written (`watched_starts.rs`).
    pub(crate) async fn enqueue_orchestrator(
        &self,
        item: WorkItem,
        delay: Option<Duration>,
    ) -> Result<(), ProviderError> {
        const OP: &str = "enqueue_for_orchestrator";
        let rows = OrchestratorRows::new(std::slice::from_ref(&item), delay, OP)?;
        let WorkItem::StartOrchestration { instance, .. } = &item else {
            rows.bind(self.query(&self.q.orch_enqueue))
                .execute_on(self, OP)
                .await?;
            return Ok(());
        };
        let watch = self.wakes().watched_starts().watch_start(instance);
        let row = rows
            .bind(self.query(&self.q.orch_enqueue_start))
            .bind(instance)
            .fetch_one_on(self, OP)
            .await?;
        let ran_before: bool = row.try_get(0).map_err(|e| db_error(OP, e))?;
        watch.keep_if(!ran_before);
        Ok(())
    }

    /// Enqueue `start` (a `StartOrchestration`) only if its instance does not exist yet (no
    /// instance row, no start enqueued before), atomically: of concurrent exclusive starts
    /// of one id exactly one enqueues. True when enqueued, false when the instance exists.
    pub async fn start_orchestration_exclusive(
        &self,
        start: WorkItem,
    ) -> Result<bool, ProviderError> {
        const OP: &str = "start_orchestration_exclusive";
        let WorkItem::StartOrchestration { instance, .. } = &start else {
            return Err(ProviderError::permanent(
                OP,
                format!("work item {} is not a StartOrchestration", kind_of(&start)),
            ));
        };
        let text =
            serde_json::to_string(&start).map_err(|e| codec_error(OP, "serialize work item", e))?;
        let watch = self.wakes().watched_starts().watch_start(instance);
        let enqueued: bool = self
            .scalar(&self.q.orch_start_exclusive)
            .bind(instance)
            .bind(&text)
            .fetch_one_on(self, OP)
            .await?;
        watch.keep_if(enqueued);
        if enqueued {
            self.enqueued(crate::wake::Enqueued::ORCHESTRATOR);
        }
        Ok(enqueued)
    }
}

/// Orchestrator messages as the parallel arrays `enqueue_orchestrator` takes: instance,
/// work item, delay ms, absolute visibility in epoch ms.
pub(crate) struct OrchestratorRows {
    instances: Vec<String>,
    texts: Vec<String>,
    delays: Vec<Option<f64>>,
    visible_at: Vec<Option<f64>>,
}

impl OrchestratorRows {
    pub(crate) fn new(
        items: &[WorkItem],
        delay: Option<Duration>,
        operation: &str,
    ) -> Result<Self, ProviderError> {
        let mut rows = Self {
            instances: Vec::with_capacity(items.len()),
            texts: Vec::with_capacity(items.len()),
            delays: Vec::with_capacity(items.len()),
            visible_at: Vec::with_capacity(items.len()),
        };
        for item in items {
            let Some(instance) = orchestrator_target(item) else {
                return Err(ProviderError::permanent(
                    operation,
                    format!(
                        "work item {} does not belong on the orchestrator queue",
                        kind_of(item)
                    ),
                ));
            };
            rows.instances.push(instance.to_string());
            rows.texts.push(
                serde_json::to_string(item)
                    .map_err(|e| codec_error(operation, "serialize work item", e))?,
            );
            rows.delays.push(delay.map(millis));
            // An explicit delay wins; otherwise a timer becomes visible when it fires.
            rows.visible_at.push(match (delay, item) {
                (None, WorkItem::TimerFired { fire_at_ms, .. }) => Some(*fire_at_ms as f64),
                _ => None,
            });
        }
        Ok(rows)
    }

    pub(crate) fn bind<'q>(&'q self, q: PgQuery<'q>) -> PgQuery<'q> {
        q.bind(&self.instances)
            .bind(&self.texts)
            .bind(&self.delays)
            .bind(&self.visible_at)
    }
}

/// Name and version of the start (or continue-as-new) message in a batch.
pub(crate) fn start_of(messages: &[WorkItem]) -> Option<(String, Option<String>)> {
    messages.iter().find_map(|m| match m {
        WorkItem::StartOrchestration {
            orchestration,
            version,
            ..
        }
        | WorkItem::ContinueAsNew {
            orchestration,
            version,
            ..
        } => Some((orchestration.clone(), version.clone())),
        _ => None,
    })
}

/// The instance whose orchestrator queue a work item goes to.
pub(crate) fn orchestrator_target(item: &WorkItem) -> Option<&str> {
    match item {
        WorkItem::StartOrchestration { instance, .. }
        | WorkItem::ActivityCompleted { instance, .. }
        | WorkItem::ActivityFailed { instance, .. }
        | WorkItem::TimerFired { instance, .. }
        | WorkItem::ExternalRaised { instance, .. }
        | WorkItem::QueueMessage { instance, .. }
        | WorkItem::CancelInstance { instance, .. }
        | WorkItem::ContinueAsNew { instance, .. } => Some(instance),
        WorkItem::SubOrchCompleted {
            parent_instance, ..
        }
        | WorkItem::SubOrchFailed {
            parent_instance, ..
        } => Some(parent_instance),
        _ => None,
    }
}

/// The variant name of a work item, for diagnostics.
pub(crate) fn kind_of(item: &WorkItem) -> &'static str {
    match item {
        WorkItem::StartOrchestration { .. } => "StartOrchestration",
        WorkItem::ActivityExecute { .. } => "ActivityExecute",
        WorkItem::ActivityCompleted { .. } => "ActivityCompleted",
        WorkItem::ActivityFailed { .. } => "ActivityFailed",
        WorkItem::TimerFired { .. } => "TimerFired",
        WorkItem::ExternalRaised { .. } => "ExternalRaised",
        WorkItem::SubOrchCompleted { .. } => "SubOrchCompleted",
        WorkItem::SubOrchFailed { .. } => "SubOrchFailed",
        WorkItem::CancelInstance { .. } => "CancelInstance",
        WorkItem::ContinueAsNew { .. } => "ContinueAsNew",
        WorkItem::QueueMessage { .. } => "QueueMessage",
        #[allow(unreachable_patterns)]
        _ => "Other",
    }
}

/// Distinct kinds of a batch, joined with `+`, e.g. `StartOrchestration+ExternalRaised`.
pub(crate) fn batch_kinds(messages: &[WorkItem]) -> String {
    let mut kinds: Vec<&str> = Vec::new();
    for m in messages {
        let k = kind_of(m);
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    kinds.join("+")
}
