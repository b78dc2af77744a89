//! The orchestrator queue: claim (fetch), ack, abandon and lease renewal.
//!
//! Claim protocol, per candidate instance, in one short transaction:
//! 1. take the instance's lease row with `FOR UPDATE SKIP LOCKED` (never waits);
//! 2. tag its visible messages with a fresh token and count the attempt;
//! 3. enforce the attempt ceiling (poison inside the claim);
//! 4. load instance metadata, history and KV snapshot;
//! 5. stamp the lease from `clock_timestamp()` as the last statement, then commit.
//!
//! Every other writer of an instance's queue rows (ack, abandon, deletion, poison) locks
//! the lease row first, so holding it means no one else is touching those rows.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use duroxide::providers::{
    DispatcherCapabilityFilter, ExecutionMetadata, KvEntry, OrchestrationItem, ProviderError,
    ScheduledActivityIdentifier, WorkItem,
};
use duroxide::{Event, EventKind};
use rand::Rng;
use rand::seq::SliceRandom;
use sqlx::{Postgres, Row, Transaction};

use crate::diagnostics::{Diagnostic, DiagnosticKind, QueueKind};
use crate::error::{codec_error, db_error};
use crate::polling::ClaimOutcome;
use crate::provider::PostgresProvider;
use crate::run::RunQuery;
use crate::token::new_token;
use crate::turn::{TurnWrite, poison_details};

const FETCH: &str = "fetch_orchestration_item";
const ACK: &str = "ack_orchestration_item";

pub(crate) type FetchedItem = (OrchestrationItem, String, u32);

/// A version-range filter as bound parameters: (on, min, max).
type VersionBounds = (bool, [i32; 3], [i32; 3]);

fn version_bounds(filter: Option<&DispatcherCapabilityFilter>) -> Option<VersionBounds> {
    match filter {
        None => Some((false, [0; 3], [0; 3])),
        Some(f) => {
            // Like the reference provider, only the first range is honoured.
            let range = f.supported_duroxide_versions.first()?;
            let v = |x: u64| i32::try_from(x).unwrap_or(i32::MAX);
            Some((
                true,
                [v(range.min.major), v(range.min.minor), v(range.min.patch)],
                [v(range.max.major), v(range.max.minor), v(range.max.patch)],
            ))
        }
    }
}

pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

impl PostgresProvider {
    pub(crate) async fn fetch_orchestration(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        filter: Option<&DispatcherCapabilityFilter>,
    ) -> Result<Option<FetchedItem>, ProviderError> {
        let Some(bounds) = version_bounds(filter) else {
            return Ok(None);
        };
        self.poll(FETCH, poll_timeout, &self.q.orch_next_visible, || {
            self.claim_orchestration(lock_timeout, bounds)
        })
        .await
    }

    async fn claim_orchestration(
        &self,
        lock_timeout: Duration,
        bounds: VersionBounds,
    ) -> Result<ClaimOutcome<FetchedItem>, ProviderError> {
        let claim = &self.options.claim;
        let started = Instant::now();
        let mut tries = 0u32;
        loop {
            // Every round re-reads the candidates (and the clock); a round ends after two
            // failed tries in a row, since under contention its list goes stale quickly.
            let candidates = self.orchestration_candidates(bounds).await?;
            if candidates.is_empty() {
                return Ok(ClaimOutcome::Empty);
            }
            for instance in candidates.iter().take(2) {
                // The first try always happens, however long the candidate query took.
                if tries > 0
                    && (tries >= claim.max_claim_attempts
                        || started.elapsed() >= claim.max_claim_duration)
                {
                    let bound = if tries >= claim.max_claim_attempts {
                        "tries"
                    } else {
                        "time"
                    };
                    self.diagnostics.emit(
                        Diagnostic::new(
                            DiagnosticKind::ClaimExhausted,
                            QueueKind::Orchestrator,
                            format!(
                                "gave up after {tries} candidate tries in {} ms (bound: {bound})",
                                started.elapsed().as_millis()
                            ),
                        )
                        .attempts(None, claim.max_attempts),
                    );
                    return Ok(ClaimOutcome::Exhausted);
                }
                tries += 1;
                if let Some(item) = self.try_claim_instance(instance, lock_timeout).await? {
                    return Ok(ClaimOutcome::Claimed(item));
                }
            }
        }
    }

    /// Eligible instances in the order to try them. The scanned instances (oldest ready
    /// message first) are cut into blocks of `fanout`; the first try is a random member
    /// of the oldest block, the next a random member of the next block, and so on, round
    /// after round. Uncontended, the claim takes one of the oldest `fanout`; when that try
    /// loses to a concurrent dispatcher the next goes to younger work instead of chasing
    /// the same few rows. `fanout = 1` is strict FIFO.
    async fn orchestration_candidates(
        &self,
        bounds: VersionBounds,
    ) -> Result<Vec<String>, ProviderError> {
        let claim = &self.options.claim;
        let backoff = &claim.redelivery_backoff;
        let (on, min, max) = bounds;
        let scan = i64::from(claim.fanout.saturating_mul(4).clamp(64, 4096));
        let rows = self
            .query(&self.q.orch_candidates)
            .bind(scan)
            .bind(millis(backoff.base))
            .bind(millis(backoff.cap))
            .bind(on)
            .bind(min[0])
            .bind(min[1])
            .bind(min[2])
            .bind(max[0])
            .bind(max[1])
            .bind(max[2])
            .fetch_all_on(self, FETCH)
            .await?;
        let mut distinct: Vec<String> = Vec::new();
        let mut missing = Vec::new();
        for row in rows {
            let id: String = row.get(0);
            if row.get::<bool, _>(1) {
                missing.push(id.clone());
            }
            if !distinct.contains(&id) {
                distinct.push(id);
            }
        }
        for id in missing {
            self.query(&self.q.orch_lease_ensure)
                .bind(&id)
                .execute_on(self, FETCH)
                .await?;
        }
        Ok(spread_over_blocks(
            distinct,
            claim.fanout as usize,
            &mut rand::thread_rng(),
        ))
    }

    async fn try_claim_instance(
        &self,
        instance: &str,
        lock_timeout: Duration,
    ) -> Result<Option<FetchedItem>, ProviderError> {
        let claim = &self.options.claim;
        let backoff = &claim.redelivery_backoff;
        let mut tx = self.begin(FETCH).await?;
        let taken = self
            .query(&self.q.orch_lease_take)
            .bind(instance)
            .bind(millis(backoff.base))
            .bind(millis(backoff.cap))
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        if taken.is_none() {
            return Ok(None);
        }
        let token = new_token(instance);
        let mut rows = self
            .query(&self.q.orch_messages_claim)
            .bind(instance)
            .bind(&token)
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        if rows.is_empty() {
            return Ok(None);
        }
        rows.sort_by_key(|r| r.get::<i64, _>(0));
        let attempt_count = rows
            .iter()
            .map(|r| r.get::<i32, _>(2).max(0) as u32)
            .max()
            .unwrap_or(1);
        let mut messages = Vec::with_capacity(rows.len());
        let mut undecodable = Vec::new();
        let mut errors = Vec::new();
        for row in &rows {
            let text: String = row.get(1);
            match serde_json::from_str::<WorkItem>(&text) {
                Ok(item) => messages.push(item),
                Err(e) => {
                    undecodable.push(row.get::<i64, _>(0));
                    errors.push(e.to_string());
                }
            }
        }
        if !undecodable.is_empty() {
            // A message that cannot be decoded can never be processed: dead-letter the
            // batch's undecodable rows now rather than redeliver them forever.
            self.dead_letter_undecodable(&mut tx, &undecodable, &errors.join("; "))
                .await?;
            if messages.is_empty() {
                tx.commit().await.map_err(|e| db_error(FETCH, e))?;
                return Ok(None);
            }
        }

        if let Some(max_attempts) = claim.max_attempts
            && attempt_count > max_attempts.saturating_add(1)
        {
            self.enforce_orchestration_ceiling(tx, instance, &token, &messages, max_attempts)
                .await?;
            return Ok(None);
        }

        let meta = self
            .query(&self.q.orch_instance_load)
            .bind(instance)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        let mut history_error = None;
        let (name, version, execution_id, history) = match meta {
            Some(row) => {
                let name: String = row.get(0);
                let version: Option<String> = row.get(1);
                let execution_id = row.get::<i64, _>(2) as u64;
                let history = match self.load_history(&mut tx, instance, execution_id).await? {
                    Ok(h) => h,
                    Err(e) => {
                        history_error = Some(e);
                        Vec::new()
                    }
                };
                (
                    name,
                    version.unwrap_or_else(|| "unknown".into()),
                    execution_id,
                    history,
                )
            }
            None => match self.started_without_instance_row(&mut tx, instance).await? {
                // History written without instance metadata (e.g. an ack whose metadata
                // carried no name/version): recover name and version from its start event.
                Some(found) => found,
                None => match start_of(&messages) {
                    Some((name, version)) => (
                        name,
                        version.unwrap_or_else(|| "unknown".into()),
                        1,
                        Vec::new(),
                    ),
                    None if messages
                        .iter()
                        .all(|m| matches!(m, WorkItem::QueueMessage { .. })) =>
                    {
                        // Events sent to an instance that was never started are dropped, as
                        // duroxide specifies; they would otherwise be redelivered forever.
                        self.query(&self.q.orch_messages_delete_by_token)
                            .bind(&token)
                            .execute(&mut *tx)
                            .await
                            .map_err(|e| db_error(FETCH, e))?;
                        tx.commit().await.map_err(|e| db_error(FETCH, e))?;
                        tracing::warn!(target: "steadfast_pg", instance, count = messages.len(), "dropped queue messages sent to an instance that was never started");
                        return Ok(None);
                    }
                    // Completions racing ahead of their instance's start: leave them queued.
                    None => return Ok(None),
                },
            },
        };
        let kv_snapshot = if history_error.is_some() {
            HashMap::new()
        } else {
            self.load_kv_snapshot(&mut tx, instance).await?
        };
        let jitter = rand::thread_rng().r#gen::<f64>() * backoff.jitter;
        self.query(&self.q.orch_lease_stamp)
            .bind(instance)
            .bind(&token)
            .bind(millis(lock_timeout))
            .bind(attempt_count as i32)
            .bind(jitter as f32)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        tx.commit().await.map_err(|e| db_error(FETCH, e))?;
        let item = OrchestrationItem {
            instance: instance.to_string(),
            orchestration_name: name,
            execution_id,
            version,
            history,
            messages,
            history_error,
            kv_snapshot,
        };
        Ok(Some((item, token, attempt_count)))
    }

    /// (name, version, execution, history) from the latest execution's start event, for an
    /// instance that has history but no instance row.
    async fn started_without_instance_row(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
    ) -> Result<Option<(String, String, u64, Vec<Event>)>, ProviderError> {
        let execution_id: i64 = self
            .scalar(&self.q.latest_execution_id)
            .bind(instance)
            .fetch_one(&mut **tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        let Ok(history) = self.load_history(tx, instance, execution_id as u64).await? else {
            return Ok(None);
        };
        let started = history.iter().find_map(|e| match &e.kind {
            EventKind::OrchestrationStarted { name, version, .. } => {
                Some((name.clone(), version.clone()))
            }
            _ => None,
        });
        Ok(started.map(|(name, version)| (name, version, execution_id as u64, history)))
    }

    /// History of one execution; the inner error is a deserialization failure, reported
    /// to the runtime through `history_error` so its poison path can end the instance.
    pub(crate) async fn load_history(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
        execution_id: u64,
    ) -> Result<Result<Vec<Event>, String>, ProviderError> {
        let rows = self
            .query(&self.q.history_load)
            .bind(instance)
            .bind(execution_id as i64)
            .fetch_all(&mut **tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        let mut events = Vec::with_capacity(rows.len());
        for (position, row) in rows.iter().enumerate() {
            let text: String = row.get(0);
            match serde_json::from_str::<Event>(&text) {
                Ok(e) => events.push(e),
                Err(e) => {
                    return Ok(Err(format!(
                        "failed to deserialize history event at position {position} of instance '{instance}' execution {execution_id}: {e}"
                    )));
                }
            }
        }
        Ok(Ok(events))
    }

    async fn load_kv_snapshot(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        instance: &str,
    ) -> Result<HashMap<String, KvEntry>, ProviderError> {
        let rows = self
            .query(&self.q.kv_snapshot)
            .bind(instance)
            .fetch_all(&mut **tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        Ok(rows
            .iter()
            .map(|r| {
                (
                    r.get::<String, _>(0),
                    KvEntry {
                        value: r.get(1),
                        last_updated_at_ms: r.get::<i64, _>(2).max(0) as u64,
                    },
                )
            })
            .collect())
    }

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
        let turn = TurnWrite {
            execution_id,
            history_delta,
            worker_items,
            orchestrator_items,
            metadata,
            cancelled,
        };
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
            if let Some(details) = poison {
                return self
                    .commit_poison_without_lease(tx, lock_token, state, turn, details)
                    .await;
            }
            drop(tx);
            let reason = format!("lock token {state}; the turn was not committed");
            // An expired lease still carries the attempt count of its claim.
            let attempt_count = lease.as_ref().map(|row| row.get::<i32, _>(2).max(0) as u32);
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
            return Err(ProviderError::permanent(
                ACK,
                format!("Invalid lock token: {reason}"),
            ));
        };

        if let Some(details) = &poison {
            self.dead_letter_orchestration_messages(
                &mut tx,
                &instance,
                execution_id,
                details,
                "poison",
            )
            .await?;
        } else {
            self.query(&self.q.orch_messages_delete_by_token)
                .bind(lock_token)
                .execute(&mut *tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
        }
        self.write_turn(&mut tx, &instance, &turn).await?;
        self.query(&self.q.orch_lease_release)
            .bind(&instance)
            .execute(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        tx.commit().await.map_err(|e| db_error(ACK, e))?;
        if let Some(details) = poison {
            self.diagnostics.emit(
                Diagnostic::new(
                    DiagnosticKind::PoisonCommitted,
                    QueueKind::Orchestrator,
                    "poison disposition committed with a live lease",
                )
                .instance(&instance)
                .execution(execution_id)
                .attempts(Some(details.attempt_count), Some(details.max_attempts))
                .message_kind(details.message_kinds.clone()),
            );
        }
        Ok(())
    }

    pub(crate) async fn abandon_orchestration(
        &self,
        lock_token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool,
    ) -> Result<(), ProviderError> {
        const OP: &str = "abandon_orchestration_item";
        let mut tx = self.begin(OP).await?;
        let lease = self
            .query(&self.q.orch_lease_lock_by_token)
            .bind(lock_token)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(OP, e))?;
        let Some(lease) = lease else {
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
        .await
    }

    async fn try_renew_orchestration_lease(
        &self,
        lock_token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        const OP: &str = "renew_orchestration_item_lock";
        let done = self
            .query(&self.q.orch_lease_renew)
            .bind(lock_token)
            .bind(millis(extend_for))
            .execute_on(self, OP)
            .await?;
        if done.rows_affected() == 0 {
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
        let mut instances = Vec::with_capacity(items.len());
        let mut texts = Vec::with_capacity(items.len());
        let mut delays = Vec::with_capacity(items.len());
        let mut visible_at = Vec::with_capacity(items.len());
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
            instances.push(instance.to_string());
            texts.push(
                serde_json::to_string(item)
                    .map_err(|e| codec_error(operation, "serialize work item", e))?,
            );
            delays.push(delay.map(millis));
            // An explicit delay wins; otherwise a timer becomes visible when it fires.
            visible_at.push(match (delay, item) {
                (None, WorkItem::TimerFired { fire_at_ms, .. }) => Some(*fire_at_ms as f64),
                _ => None,
            });
        }
        self.query(&self.q.orch_enqueue)
            .bind(&instances)
            .bind(&texts)
            .bind(&delays)
            .bind(&visible_at)
            .execute(&mut **tx)
            .await
            .map_err(|e| db_error(operation, e))?;
        Ok(())
    }

    pub(crate) async fn enqueue_orchestrator(
        &self,
        item: WorkItem,
        delay: Option<Duration>,
    ) -> Result<(), ProviderError> {
        const OP: &str = "enqueue_for_orchestrator";
        let mut tx = self.begin(OP).await?;
        self.enqueue_orchestrator_items(&mut tx, std::slice::from_ref(&item), delay, OP)
            .await?;
        tx.commit().await.map_err(|e| db_error(OP, e))
    }
}

/// Try order for candidates (see `orchestration_candidates`): shuffle each block of
/// `fanout`, then take the blocks' members round-robin.
fn spread_over_blocks<R: Rng>(candidates: Vec<String>, fanout: usize, rng: &mut R) -> Vec<String> {
    let mut blocks: Vec<Vec<String>> = candidates
        .chunks(fanout.max(1))
        .map(<[String]>::to_vec)
        .collect();
    for block in &mut blocks {
        block.shuffle(rng);
    }
    let rounds = blocks.first().map_or(0, Vec::len);
    let mut order = Vec::with_capacity(candidates.len());
    for round in 0..rounds {
        order.extend(blocks.iter().filter_map(|b| b.get(round).cloned()));
    }
    order
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

#[cfg(test)]
mod tests {
    use super::spread_over_blocks;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| i.to_string()).collect()
    }

    #[test]
    fn fanout_one_is_strict_fifo() {
        assert_eq!(
            spread_over_blocks(ids(5), 1, &mut rand::thread_rng()),
            ids(5)
        );
    }

    #[test]
    fn first_try_is_among_the_oldest_block_and_later_tries_move_to_younger_blocks() {
        let order = spread_over_blocks(ids(20), 8, &mut rand::thread_rng());
        let n = |s: &String| s.parse::<usize>().unwrap();
        assert_eq!(order.len(), 20);
        assert!(n(&order[0]) < 8);
        assert!((8..16).contains(&n(&order[1])));
        assert!((16..20).contains(&n(&order[2])));
        assert!(n(&order[3]) < 8);
        let mut sorted: Vec<usize> = order.iter().map(n).collect();
        sorted.sort();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>());
    }
}
