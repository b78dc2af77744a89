//! The worker (activity) queue and sessions. Claims are single autocommit `UPDATE … WHERE
//! id = (SELECT … FOR UPDATE SKIP LOCKED LIMIT 1)` statements: strict FIFO among eligible
//! items, no waiting on rows other transactions hold, leases from `clock_timestamp()`.
//! What cannot be handed out (undecodable, over the attempt ceiling) is settled afterwards
//! in a transaction holding the claimed row; a claim nobody receives is given back.

use std::time::{Duration, Instant};

use duroxide::providers::{ProviderError, SessionFetchConfig, TagFilter, WorkItem};
use duroxide::{ErrorDetails, PoisonMessageType};
use rand::Rng;
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::{Arguments, Postgres, Row, Transaction};

use crate::diagnostics::{Diagnostic, DiagnosticKind, QueueKind};
use crate::error::{codec_error, db_error};
use crate::give_back::ClaimGuard;
use crate::handoff::{Handed, Offer};
use crate::orchestration::millis;
use crate::polling::{ClaimOutcome, Rest, Woken};
use crate::provider::PostgresProvider;
use crate::run::{PgQuery, RunQuery, RunScalar};
use crate::token::new_worker_token_prefix;
use crate::turn::activity_poison_details;
use crate::wake::{Enqueued, OwnerWakeVia};

const FETCH: &str = "fetch_work_item";
const ACK: &str = "ack_work_item";

type FetchedWork = (WorkItem, String, u32);

/// Tag filter as bound parameters: (mode, tags). `None` for the filter that matches nothing.
fn tag_params(filter: &TagFilter) -> Option<(i32, Vec<String>)> {
    let sorted = |set: &std::collections::HashSet<String>| {
        let mut v: Vec<String> = set.iter().cloned().collect();
        v.sort();
        v
    };
    match filter {
        TagFilter::DefaultOnly => Some((0, Vec::new())),
        TagFilter::Tags(set) => Some((1, sorted(set))),
        TagFilter::DefaultAnd(set) => Some((2, sorted(set))),
        TagFilter::Any => Some((3, Vec::new())),
        TagFilter::None => None,
    }
}

/// Activity work items as the parallel arrays `enqueue_worker` takes: work item,
/// instance, execution, activity id, session, tag.
pub(crate) struct WorkerRows {
    texts: Vec<String>,
    instances: Vec<String>,
    executions: Vec<i64>,
    activities: Vec<i64>,
    sessions: Vec<Option<String>>,
    tags: Vec<Option<String>>,
}

impl WorkerRows {
    pub(crate) fn new(items: &[WorkItem], operation: &str) -> Result<Self, ProviderError> {
        let n = items.len();
        let mut rows = Self {
            texts: Vec::with_capacity(n),
            instances: Vec::with_capacity(n),
            executions: Vec::with_capacity(n),
            activities: Vec::with_capacity(n),
            sessions: Vec::with_capacity(n),
            tags: Vec::with_capacity(n),
        };
        for item in items {
            let WorkItem::ActivityExecute {
                instance,
                execution_id,
                id,
                session_id,
                tag,
                ..
            } = item
            else {
                return Err(ProviderError::permanent(
                    operation,
                    "only ActivityExecute work items belong on the worker queue",
                ));
            };
            rows.texts.push(
                serde_json::to_string(item)
                    .map_err(|e| codec_error(operation, "serialize work item", e))?,
            );
            rows.instances.push(instance.clone());
            rows.executions.push(*execution_id as i64);
            rows.activities.push(*id as i64);
            rows.sessions.push(session_id.clone());
            rows.tags.push(tag.clone());
        }
        Ok(rows)
    }

    pub(crate) fn bind<'q>(&'q self, q: PgQuery<'q>) -> PgQuery<'q> {
        q.bind(&self.texts)
            .bind(&self.instances)
            .bind(&self.executions)
            .bind(&self.activities)
            .bind(&self.sessions)
            .bind(&self.tags)
    }
}

impl PostgresProvider {
    pub(crate) async fn enqueue_worker_items(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        items: &[WorkItem],
        operation: &str,
    ) -> Result<(), ProviderError> {
        if items.is_empty() {
            return Ok(());
        }
        WorkerRows::new(items, operation)?
            .bind(self.query(&self.q.worker_enqueue))
            .execute(&mut **tx)
            .await
            .map_err(|e| db_error(operation, e))?;
        Ok(())
    }

    /// One statement: atomic without an explicit transaction.
    pub(crate) async fn enqueue_worker(&self, item: WorkItem) -> Result<(), ProviderError> {
        const OP: &str = "enqueue_for_worker";
        WorkerRows::new(std::slice::from_ref(&item), OP)?
            .bind(self.query(&self.q.worker_enqueue))
            .execute_on(self, OP)
            .await?;
        Ok(())
    }

    pub(crate) async fn fetch_work(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        session: Option<&SessionFetchConfig>,
        tag_filter: &TagFilter,
    ) -> Result<Option<FetchedWork>, ProviderError> {
        let Some(tags) = tag_params(tag_filter) else {
            return Ok(None);
        };
        let filters = crate::queue_wake::filters_key(&(&tags, session.map(|s| &s.owner_id)));
        let claim = &self.options.claim;
        let offer = Offer {
            tag_mode: tags.0,
            tags: tags.1.clone(),
            lock_ms: millis(crate::deadline::first_lease(
                lock_timeout,
                claim.max_activity_duration,
            )),
            jitter: (rand::thread_rng().r#gen::<f64>() * claim.redelivery_backoff.jitter) as f32,
        };
        let handed: fn(Handed) -> FetchedWork = |handed| {
            handed.guard.disarm();
            (handed.item, handed.token, 1)
        };
        let owner = session.map(|s| self.wakes().session_owners().enter(&s.owner_id));
        let owner = owner.as_ref();
        self.poll(
            QueueKind::Worker,
            poll_timeout,
            filters,
            Some((offer, handed)),
            owner,
            |woken| self.claim_work(lock_timeout, session, &tags, woken),
        )
        .await
    }

    /// A woken claim found nothing: the wake-up may have been for a session item of
    /// another owner; wake that owner's fetch if it waits in this process
    /// (`session_wakes.rs`). Best effort: a failure leaves the owner to its recheck.
    async fn wake_session_owners(&self, session: Option<&SessionFetchConfig>) {
        if !self.wakes().sessions_claimed() {
            return;
        }
        let owners: Result<Vec<String>, ProviderError> = self
            .query(&self.q.worker_session_owners)
            .bind(session.map(|s| s.owner_id.as_str()))
            .fetch_all_on(self, FETCH)
            .await
            .map(|rows| rows.iter().map(|row| row.get(0)).collect());
        match owners {
            Ok(owners) => owners.iter().for_each(|owner| {
                self.wakes().wake_session_owner(owner, OwnerWakeVia::Lookup);
            }),
            Err(e) => {
                tracing::debug!(target: "steadfast_pg", error = %e, "looking for session owners to wake failed");
            }
        }
    }

    /// `woken`: what ended the fetch's wait. Woken by the queue, a claim of nothing wakes
    /// the waiting fetches of other session owners with items ready; woken as an owner, it
    /// wakes nobody in turn and forgets this owner's sessions (`session_wakes.rs`).
    async fn claim_work(
        &self,
        lock_timeout: Duration,
        session: Option<&SessionFetchConfig>,
        (tag_mode, tags): &(i32, Vec<String>),
        woken: Woken,
    ) -> Result<ClaimOutcome<FetchedWork>, ProviderError> {
        let tell_more = woken.any();
        let claim = &self.options.claim;
        let started = Instant::now();
        let mut tries = 0u32;
        loop {
            // The first try always happens, however long acquiring a connection took.
            if tries > 0
                && (tries >= claim.max_claim_attempts
                    || started.elapsed() >= claim.max_claim_duration)
            {
                self.diagnostics.emit(
                    Diagnostic::new(
                        DiagnosticKind::ClaimExhausted,
                        QueueKind::Worker,
                        format!(
                            "gave up after {tries} tries in {} ms",
                            started.elapsed().as_millis()
                        ),
                    )
                    .attempts(None, claim.max_attempts),
                );
                return Ok(ClaimOutcome::Exhausted);
            }
            tries += 1;
            let (row, guard) = match self
                .claim_work_once(lock_timeout, session, tag_mode, tags, tell_more)
                .await?
            {
                Ok(claimed) => claimed,
                Err(next_visible_ms) => {
                    match (woken, session) {
                        (Woken::ByQueue, _) => self.wake_session_owners(session).await,
                        (Woken::ByOwner, Some(config)) => {
                            self.wakes().forget_session_owner(&config.owner_id)
                        }
                        _ => {}
                    }
                    return Ok(ClaimOutcome::Empty(next_visible_ms));
                }
            };
            let id: i64 = row.get(0);
            let token: String = row.get("lock_token");
            let text: String = row.get(1);
            let attempt_count = row.get::<i32, _>(2).max(0) as u32;
            let session_id: Option<String> = row.get(3);
            let rest = Rest {
                more_ready: row.get::<Option<bool>, _>("more_ready").unwrap_or(true),
                next_visible_ms: tell_more.then(|| row.get("next_visible_ms")),
            };
            let item = match serde_json::from_str::<WorkItem>(&text) {
                Ok(item) => item,
                Err(e) => {
                    if let Some(mut tx) = self.hold_work(&token).await? {
                        self.dead_letter_work(
                            &mut tx,
                            id,
                            None,
                            "undecodable",
                            &e.to_string(),
                            None,
                        )
                        .await?;
                        tx.commit().await.map_err(|e| db_error(FETCH, e))?;
                    }
                    guard.disarm();
                    continue;
                }
            };
            if let Some(max_attempts) = claim.max_attempts
                && attempt_count > max_attempts.saturating_add(1)
            {
                if let Some(tx) = self.hold_work(&token).await? {
                    self.enforce_worker_ceiling(tx, id, &item, &text, max_attempts)
                        .await?;
                }
                guard.disarm();
                continue;
            }
            if let (Some(sid), Some(config)) = (&session_id, session) {
                let claimed = self
                    .query(&self.q.session_claim)
                    .bind(sid)
                    .bind(&config.owner_id)
                    .bind(millis(config.lock_timeout))
                    .fetch_optional_on(self, FETCH)
                    .await?;
                if claimed.is_none() {
                    // Another owner won the session between our claim and this one: the
                    // guard, dropped here, gives the item back.
                    continue;
                }
                self.wakes().session_claimed(sid, &config.owner_id);
            }
            guard.disarm();
            return Ok(ClaimOutcome::Claimed((item, token, attempt_count), rest));
        }
    }

    /// One autocommit claim statement, run on its own task and armed with a give-back as
    /// soon as it returns a claimed row (see `give_back`): a fetch cancelled while the
    /// statement runs leaves no item leased to nobody. Nothing claimed: the milliseconds
    /// until the next delayed item becomes visible, if read. With `tell_more`, the claimed
    /// row's `more_ready` says whether any other item looked ready, and its
    /// `next_visible_ms` when the next delayed one becomes visible.
    async fn claim_work_once(
        &self,
        lock_timeout: Duration,
        session: Option<&SessionFetchConfig>,
        tag_mode: &i32,
        tags: &[String],
        tell_more: bool,
    ) -> Result<Result<(PgRow, ClaimGuard), Option<f64>>, ProviderError> {
        let claim = &self.options.claim;
        let backoff = &claim.redelivery_backoff;
        let jitter = rand::thread_rng().r#gen::<f64>() * backoff.jitter;
        let mut args = PgArguments::default();
        let bound = (|| {
            args.add(new_worker_token_prefix())?;
            args.add(millis(crate::deadline::first_lease(
                lock_timeout,
                claim.max_activity_duration,
            )))?;
            args.add(jitter as f32)?;
            args.add(millis(backoff.base))?;
            args.add(millis(backoff.cap))?;
            args.add(*tag_mode)?;
            args.add(tags)?;
            args.add(session.map(|s| s.owner_id.as_str()))?;
            // Every fetch may wait: an empty claim reads when the next work becomes visible.
            args.add(true)?;
            args.add(tell_more)
        })();
        bound.map_err(|e| {
            ProviderError::permanent(FETCH, format!("binding claim arguments: {e}"))
        })?;
        let give_back = self.worker_give_back.clone();
        let (row, guard) = self
            .fetch_one_detached(FETCH, &self.q.worker_claim, args, move |row| {
                let token = row
                    .try_get::<Option<String>, _>("lock_token")
                    .ok()
                    .flatten();
                token.map(|token| give_back.arm(token))
            })
            .await?;
        Ok(match guard {
            Some(guard) => Ok((row, guard)),
            None => Err(row.get("next_visible_ms")),
        })
    }

    /// A transaction holding the row of a work item this fetch just claimed; `None` when
    /// the item is gone (its activity was cancelled meanwhile).
    async fn hold_work(
        &self,
        token: &str,
    ) -> Result<Option<Transaction<'static, Postgres>>, ProviderError> {
        let mut tx = self.begin(FETCH).await?;
        let held = self
            .query(&self.q.worker_lock_by_token)
            .bind(token)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        Ok(held.map(|_| tx))
    }

    async fn dead_letter_work(
        &self,
        tx: &mut Transaction<'static, Postgres>,
        id: i64,
        max_attempts: Option<u32>,
        reason: &str,
        error: &str,
        attempt_count: Option<u32>,
    ) -> Result<(), ProviderError> {
        self.query(&self.q.dead_letter_worker_item)
            .bind(id)
            .bind(max_attempts.map(|m| m as i32))
            .bind(reason)
            .bind(error)
            .bind(attempt_count.map(|a| a as i32))
            .execute(&mut **tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        Ok(())
    }

    /// A work item already handed out `max_attempts + 1` times: dead-letter it and tell
    /// its orchestration it failed as poison (same shape as the runtime's). Commits `tx`.
    async fn enforce_worker_ceiling(
        &self,
        mut tx: Transaction<'static, Postgres>,
        id: i64,
        item: &WorkItem,
        text: &str,
        max_attempts: u32,
    ) -> Result<(), ProviderError> {
        let handed_out = max_attempts.saturating_add(1);
        let WorkItem::ActivityExecute {
            instance,
            execution_id,
            id: activity_id,
            name,
            ..
        } = item
        else {
            return Err(ProviderError::permanent(
                FETCH,
                "worker queue holds a non-activity item",
            ));
        };
        let error = ErrorDetails::Poison {
            attempt_count: handed_out,
            max_attempts,
            message_type: PoisonMessageType::Activity {
                instance: instance.clone(),
                execution_id: *execution_id,
                activity_name: name.clone(),
                activity_id: *activity_id,
            },
            message: text.to_string(),
        };
        self.dead_letter_work(
            &mut tx,
            id,
            Some(max_attempts),
            "attempt_ceiling",
            &error.display_message(),
            Some(handed_out),
        )
        .await?;
        let completion = WorkItem::ActivityFailed {
            instance: instance.clone(),
            execution_id: *execution_id,
            id: *activity_id,
            details: error,
        };
        self.enqueue_orchestrator_items(&mut tx, std::slice::from_ref(&completion), None, FETCH)
            .await?;
        tx.commit().await.map_err(|e| db_error(FETCH, e))?;
        self.enqueued(Enqueued::ORCHESTRATOR);
        self.diagnostics.emit(
            Diagnostic::new(
                DiagnosticKind::AttemptCeilingEnforced,
                QueueKind::Worker,
                format!("activity '{name}' handed out {handed_out} times; the claim dead-lettered it and failed it as poison"),
            )
            .instance(instance)
            .execution(*execution_id)
            .attempts(Some(handed_out), Some(max_attempts))
            .message_kind("ActivityExecute"),
        );
        Ok(())
    }

    /// The diagnostic of a refused worker ack, with as much identity as is still known: the
    /// completion names its instance and execution; the row, if it still carries the token
    /// (an expired lease), gives the attempt count.
    async fn worker_ack_rejected(&self, token: &str, completion: Option<&WorkItem>) -> Diagnostic {
        let mut d = Diagnostic::new(
            DiagnosticKind::AckRejected,
            QueueKind::Worker,
            "activity lock token expired, superseded, or its item was cancelled; the result was not committed",
        );
        let mut attempt_count = None;
        // Best effort: the diagnostic is still emitted if this read fails.
        if let Ok(Some(row)) = self
            .query(&self.q.worker_identity_by_token)
            .bind(token)
            .fetch_optional_on(self, ACK)
            .await
        {
            if let Some(i) = row.get::<Option<String>, _>(0) {
                d = d.instance(&i);
            }
            if let Some(e) = row.get::<Option<i64>, _>(1) {
                d = d.execution(e.max(0) as u64);
            }
            attempt_count = Some(row.get::<i32, _>(2).max(0) as u32);
        }
        let answered = match completion {
            Some(WorkItem::ActivityCompleted {
                instance,
                execution_id,
                ..
            }) => Some((instance, execution_id, "ActivityCompleted")),
            Some(WorkItem::ActivityFailed {
                instance,
                execution_id,
                ..
            }) => Some((instance, execution_id, "ActivityFailed")),
            _ => None,
        };
        d = match answered {
            Some((instance, execution, kind)) => d
                .instance(instance)
                .execution(*execution)
                .message_kind(kind),
            None => d.message_kind("ActivityCancelled"),
        };
        d.attempts(attempt_count, self.options.claim.max_attempts)
    }

    pub(crate) async fn ack_work(
        &self,
        token: &str,
        completion: Option<WorkItem>,
    ) -> Result<(), ProviderError> {
        if let Some(c) = &completion
            && !matches!(
                c,
                WorkItem::ActivityCompleted { .. } | WorkItem::ActivityFailed { .. }
            )
        {
            return Err(ProviderError::permanent(
                ACK,
                "Invalid completion type for worker ack",
            ));
        }
        if let Some(c) = completion.as_ref()
            && let Some(details) = activity_poison_details(c)
        {
            let tx = self.begin(ACK).await?;
            return self
                .commit_activity_poison(tx, token, c.clone(), details)
                .await;
        }
        // An ordinary ack: one statement (ack_activity) that completes only a live lease.
        let (instance, text) = match &completion {
            Some(c) => (
                crate::orchestration::orchestrator_target(c).map(str::to_string),
                Some(
                    serde_json::to_string(c)
                        .map_err(|e| codec_error(ACK, "serialize work item", e))?,
                ),
            ),
            None => (None, None),
        };
        let acked: bool = self
            .scalar(&self.q.worker_ack)
            .bind(token)
            .bind(instance)
            .bind(text)
            .fetch_one_on(self, ACK)
            .await?;
        if !acked {
            let d = self.worker_ack_rejected(token, completion.as_ref()).await;
            self.diagnostics.emit(d);
            return Err(ProviderError::permanent(
                ACK,
                "Activity was cancelled or lock expired (worker queue row not found or lock invalid)",
            ));
        }
        Ok(())
    }

    /// An activity poison disposition: dead-letter the work item and deliver the failure,
    /// keyed on (instance, execution, activity id) and the token rather than on the live
    /// lease, so it commits even when the lease has expired — unless the item no longer
    /// carries the token (completed, cancelled, claimed again, or deleted with its
    /// instance: a re-created instance's items never carry an older token) or its
    /// execution is terminal or replaced. Consumes `tx`.
    async fn commit_activity_poison(
        &self,
        mut tx: Transaction<'static, Postgres>,
        token: &str,
        completion: WorkItem,
        details: crate::turn::PoisonDetails,
    ) -> Result<(), ProviderError> {
        let WorkItem::ActivityFailed {
            instance,
            execution_id,
            id: activity_id,
            details: error,
        } = &completion
        else {
            return Err(ProviderError::permanent(
                ACK,
                "poison completion must be ActivityFailed",
            ));
        };
        let diagnostic = |kind, reason: String| {
            Diagnostic::new(kind, QueueKind::Worker, reason)
                .instance(instance)
                .execution(*execution_id)
                .attempts(Some(details.attempt_count), Some(details.max_attempts))
                .message_kind("ActivityExecute")
        };
        let lost = |reason: String| {
            self.diagnostics
                .emit(diagnostic(DiagnosticKind::PoisonLost, reason.clone()));
            ProviderError::permanent(ACK, format!("poison disposition not committed: {reason}"))
        };
        let row = self
            .query(&self.q.worker_lock_by_identity)
            .bind(instance)
            .bind(*execution_id as i64)
            .bind(*activity_id as i64)
            .bind(token)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(ACK, e))?;
        let Some(row) = row else {
            return Err(lost(
                "the work item is no longer held by this claim (completed, cancelled, claimed again, or its instance deleted or re-created)".into(),
            ));
        };
        let id: i64 = row.get(0);
        let live: bool = row.get(1);
        if !live {
            let state = self
                .query(&self.q.execution_state)
                .bind(instance)
                .bind(*execution_id as i64)
                .fetch_optional(&mut *tx)
                .await
                .map_err(|e| db_error(ACK, e))?;
            if let Some(state) = state {
                let current = state.get::<i64, _>(0) as u64;
                let status: Option<String> = state.get(1);
                if current > *execution_id {
                    return Err(lost(format!(
                        "execution {execution_id} was replaced by {current}"
                    )));
                }
                if let Some(s) = status
                    .filter(|s| matches!(s.as_str(), "Completed" | "Failed" | "ContinuedAsNew"))
                {
                    return Err(lost(format!(
                        "execution {execution_id} is already terminal ({s})"
                    )));
                }
            }
        }
        self.dead_letter_work(
            &mut tx,
            id,
            Some(details.max_attempts),
            "poison",
            &error.display_message(),
            Some(details.attempt_count),
        )
        .await?;
        self.enqueue_orchestrator_items(&mut tx, std::slice::from_ref(&completion), None, ACK)
            .await?;
        tx.commit().await.map_err(|e| db_error(ACK, e))?;
        let emitted = if live {
            diagnostic(
                DiagnosticKind::PoisonCommitted,
                "activity poison disposition committed with a live lease".into(),
            )
        } else {
            diagnostic(
                DiagnosticKind::PoisonCommittedWithoutLease,
                format!(
                    "activity lease gone; committed keyed on (instance, execution {execution_id}, activity {activity_id}, attempt {})",
                    details.attempt_count
                ),
            )
        };
        self.diagnostics.emit(emitted);
        Ok(())
    }

    pub(crate) async fn renew_work_lease(
        &self,
        token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        crate::transient::retry_while_lease_may_live(extend_for, || {
            self.try_renew_work_lease(token, extend_for)
        })
        .await
    }

    async fn try_renew_work_lease(
        &self,
        token: &str,
        extend_for: Duration,
    ) -> Result<(), ProviderError> {
        const OP: &str = "renew_work_item_lock";
        let mut tx = self.begin(OP).await?;
        let deadline = self.options.claim.max_activity_duration;
        let row = self
            .query(&self.q.worker_renew)
            .bind(token)
            .bind(millis(extend_for))
            .bind(deadline.map(millis))
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| db_error(OP, e))?;
        if !row.get::<bool, _>("renewed") {
            if row.get::<bool, _>("past_deadline") {
                return Err(crate::deadline::reached(
                    OP,
                    "activity",
                    "claim.max_activity_duration",
                    deadline,
                    None,
                ));
            }
            return Err(ProviderError::permanent(
                OP,
                "Lock renewal failed - activity was cancelled or lock expired",
            ));
        }
        if let Some(sid) = row.get::<Option<String>, _>("session_id") {
            self.query(&self.q.session_touch)
                .bind(&sid)
                .execute(&mut *tx)
                .await
                .map_err(|e| db_error(OP, e))?;
        }
        tx.commit().await.map_err(|e| db_error(OP, e))
    }

    pub(crate) async fn abandon_work(
        &self,
        token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool,
    ) -> Result<(), ProviderError> {
        const OP: &str = "abandon_work_item";
        let done = self
            .query(&self.q.worker_abandon)
            .bind(token)
            .bind(delay.map(millis))
            .bind(ignore_attempt)
            .execute_on(self, OP)
            .await?;
        if done.rows_affected() == 0 {
            return Err(ProviderError::permanent(
                OP,
                "Invalid lock token or already acked",
            ));
        }
        Ok(())
    }

    pub(crate) async fn renew_sessions(
        &self,
        owner_ids: &[&str],
        extend_for: Duration,
        idle_timeout: Duration,
    ) -> Result<usize, ProviderError> {
        if owner_ids.is_empty() {
            return Ok(0);
        }
        let done = self
            .query(&self.q.session_renew)
            .bind(owner_ids)
            .bind(millis(extend_for))
            .bind(millis(idle_timeout))
            .execute_on(self, "renew_session_lock")
            .await?;
        Ok(done.rows_affected() as usize)
    }

    pub(crate) async fn cleanup_sessions(&self) -> Result<usize, ProviderError> {
        let done = self
            .query(&self.q.session_cleanup)
            .execute_on(self, "cleanup_orphaned_sessions")
            .await?;
        Ok(done.rows_affected() as usize)
    }
}
