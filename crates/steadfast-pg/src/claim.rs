//! The orchestrator queue's claim (fetch): one autocommit call of the server-side function
//! `claim_orchestration` (`functions/claim_orchestration.sql`), which picks candidates in
//! fan-out order, takes a lease row with `FOR UPDATE SKIP LOCKED`, tags and counts the
//! instance's visible messages, reads its metadata, history and KV snapshot, and stamps
//! the lease last.
//!
//! The attempt ceiling is decided inside that statement (`functions/fail_stopped_instance.sql`);
//! this module only reports what it stopped. The one rare outcome that needs Rust,
//! undecodable messages, is settled afterwards in a transaction that holds the
//! just-claimed lease, and the claim is then tried again.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use duroxide::providers::{
    DispatcherCapabilityFilter, KvEntry, OrchestrationItem, ProviderError, WorkItem,
};
use duroxide::{Event, EventKind};
use rand::Rng;
use sqlx::postgres::{PgArguments, PgRow};
use sqlx::{Arguments, Postgres, Row, Transaction};

use crate::diagnostics::{Diagnostic, DiagnosticKind, QueueKind};
use crate::error::db_error;
use crate::orchestration::{millis, start_of};
use crate::polling::{ClaimOutcome, Rest};
use crate::provider::PostgresProvider;
use crate::reads::decode_history;
use crate::run::RunScalar;
use crate::token::new_nonce;
use crate::wake::Enqueued;

const FETCH: &str = "fetch_orchestration_item";

/// A claim whose reply took at least this long to arrive and decode restarts its lease
/// from the database clock before returning, so the caller gets a full lease.
const RESTAMP_AFTER: Duration = Duration::from_millis(50);

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

/// What one call of the claim function came to; `None` when something was claimed but
/// could not be handed out and was settled (dead-lettered or given back), so the claim
/// should be tried again.
type Attempt = Option<ClaimOutcome<FetchedItem>>;

/// The claimed instance's name, version, execution and history.
struct Loaded {
    name: String,
    version: String,
    execution_id: u64,
    history: Vec<Event>,
    history_error: Option<String>,
}

/// The messages of a claim, decoded in queue order.
struct ClaimedMessages {
    messages: Vec<WorkItem>,
    undecodable: Vec<i64>,
    errors: Vec<String>,
    attempt_count: u32,
}

fn decode_messages(row: &PgRow) -> ClaimedMessages {
    let ids: Vec<i64> = row.get("msg_ids");
    let texts: Vec<String> = row.get("msg_items");
    let attempts: Vec<i32> = row.get("msg_attempts");
    let mut out = ClaimedMessages {
        messages: Vec::with_capacity(texts.len()),
        undecodable: Vec::new(),
        errors: Vec::new(),
        attempt_count: attempts
            .iter()
            .map(|a| (*a).max(0) as u32)
            .max()
            .unwrap_or(1),
    };
    for (id, text) in ids.into_iter().zip(texts) {
        match serde_json::from_str::<WorkItem>(&text) {
            Ok(item) => out.messages.push(item),
            Err(e) => {
                out.undecodable.push(id);
                out.errors.push(e.to_string());
            }
        }
    }
    out
}

fn decode_kv(row: &PgRow) -> HashMap<String, KvEntry> {
    let keys: Option<Vec<String>> = row.get("kv_keys");
    let values: Option<Vec<String>> = row.get("kv_values");
    let times: Option<Vec<i64>> = row.get("kv_times");
    keys.unwrap_or_default()
        .into_iter()
        .zip(values.unwrap_or_default())
        .zip(times.unwrap_or_default())
        .map(|((key, value), at)| {
            (
                key,
                KvEntry {
                    value,
                    last_updated_at_ms: at.max(0) as u64,
                },
            )
        })
        .collect()
}

/// Name, version, execution and history of the claimed instance. `None`
/// when it was never started and the batch does not start it (the claim function
/// normally leaves such batches alone; this is the client's own check).
fn instance_of(row: &PgRow, instance: &str, messages: &[WorkItem]) -> Option<Loaded> {
    let execution_id = row.get::<i64, _>("exec_id") as u64;
    let texts: Option<Vec<String>> = row.get("history_events");
    let history = decode_history(&texts.unwrap_or_default(), instance, execution_id);
    if row.get::<bool, _>("has_instance") {
        let name: String = row.get("orch_name");
        let version: Option<String> = row.get("orch_version");
        let version = version.unwrap_or_else(|| "unknown".into());
        let (history, history_error) = match history {
            Ok(h) => (h, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        return Some(Loaded {
            name,
            version,
            execution_id,
            history,
            history_error,
        });
    }
    // History written without instance metadata (e.g. an ack whose metadata carried no
    // name/version): recover name and version from its start event.
    let started = history.ok().and_then(|h| {
        let found = h.iter().find_map(|e| match &e.kind {
            EventKind::OrchestrationStarted { name, version, .. } => {
                Some((name.clone(), version.clone()))
            }
            _ => None,
        });
        found.map(|(name, version)| (name, version, h))
    });
    match started {
        Some((name, version, history)) => Some(Loaded {
            name,
            version,
            execution_id,
            history,
            history_error: None,
        }),
        None => start_of(messages).map(|(name, version)| Loaded {
            name,
            version: version.unwrap_or_else(|| "unknown".into()),
            execution_id: 1,
            history: Vec::new(),
            history_error: None,
        }),
    }
}

/// The duroxide version stamped on events the claim writes itself (a ceiling failure),
/// as the runtime stamps its own.
fn event_version() -> &'static str {
    static VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    VERSION.get_or_init(|| duroxide::providers::current_build_version().to_string())
}

/// One instance the claim statement stopped instead of handing it out (an element of its
/// `stopped` column: `functions/fail_stopped_instance.sql`'s columns, instance and reason).
#[derive(serde::Deserialize)]
struct StoppedInstance {
    instance: String,
    reason: String,
    execution_id: Option<i64>,
    failed: bool,
    moved: Option<i32>,
    kinds: Option<String>,
}

fn claim_args(
    provider: &PostgresProvider,
    lease: Duration,
    (on, min, max): &VersionBounds,
) -> Result<PgArguments, ProviderError> {
    let claim = &provider.options.claim;
    let backoff = &claim.redelivery_backoff;
    let scan = i32::try_from(claim.fanout.saturating_mul(4).clamp(64, 4096)).unwrap_or(4096);
    let jitter = (rand::thread_rng().r#gen::<f64>() * backoff.jitter) as f32;
    let int = |x: u32| i32::try_from(x).unwrap_or(i32::MAX);
    let mut args = PgArguments::default();
    let bound = (|| {
        args.add(new_nonce())?;
        args.add(millis(lease))?;
        args.add(jitter)?;
        args.add(scan)?;
        args.add(int(claim.fanout))?;
        args.add(int(claim.max_claim_attempts))?;
        args.add(millis(claim.max_claim_duration))?;
        args.add(millis(backoff.base))?;
        args.add(millis(backoff.cap))?;
        args.add(*on)?;
        args.add(min.to_vec())?;
        args.add(max.to_vec())?;
        args.add(claim.max_attempts.map(int))?;
        args.add(event_version())?;
        args.add(claim.max_batch_messages.map(int))?;
        args.add(claim.max_history_events.map(int))?;
        args.add(
            claim
                .max_history_bytes
                .map(|b| i64::try_from(b).unwrap_or(i64::MAX)),
        )?;
        // Every fetch may wait, so an empty claim reads when the next work becomes visible.
        args.add(true)
    })();
    bound.map_err(|e| ProviderError::permanent(FETCH, format!("binding claim arguments: {e}")))?;
    Ok(args)
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
        // Every lease this fetch stamps (claim, restamp, lease book): cut at the deadline.
        let lease =
            crate::deadline::first_lease(lock_timeout, self.options.claim.max_turn_duration);
        let filters = crate::queue_wake::filters_key(&bounds);
        self.poll(
            QueueKind::Orchestrator,
            poll_timeout,
            filters,
            None,
            None,
            |_| self.claim_orchestration(lease, bounds),
        )
        .await
    }

    async fn claim_orchestration(
        &self,
        lease: Duration,
        bounds: VersionBounds,
    ) -> Result<ClaimOutcome<FetchedItem>, ProviderError> {
        // Every claim round, so that a long-polling fetch sweeps while it waits too.
        self.sweep_orphans_if_due();
        // A settled claim removed or gave back what it took, so the next call moves on;
        // the bound only keeps a pathological queue from holding a dispatcher here.
        for _ in 0..self.options.claim.max_claim_attempts {
            if let Some(outcome) = self.claim_once(lease, &bounds).await? {
                return Ok(outcome);
            }
        }
        Ok(ClaimOutcome::Exhausted)
    }

    async fn claim_once(
        &self,
        lease: Duration,
        bounds: &VersionBounds,
    ) -> Result<Attempt, ProviderError> {
        let claim = &self.options.claim;
        let args = claim_args(self, lease, bounds)?;
        let sent = Instant::now();
        // Armed on the statement's own task as soon as a claim is read, so that a fetch
        // cancelled from here on gives the claim back (see `give_back`).
        let give_back = self.give_back.clone();
        let (row, guard) = self
            .fetch_one_detached(FETCH, &self.q.orch_claim, args, move |row| {
                let claimed = row.get::<String, _>("outcome") == "claimed";
                claimed.then(|| give_back.arm(row.get("token")))
            })
            .await?;
        let outcome: String = row.get("outcome");
        let tries = row.get::<i32, _>("tries").max(0) as u32;
        self.report_ceilings(&row);
        let parked: i32 = row.get("parked_instances");
        if parked > 0 {
            tracing::warn!(target: "steadfast_pg", count = parked, "instances whose start is gone: their messages now wait for a start");
        }
        let guard = match (outcome.as_str(), guard) {
            ("claimed", Some(guard)) => guard,
            ("exhausted", _) => {
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
                            sent.elapsed().as_millis()
                        ),
                    )
                    .attempts(None, claim.max_attempts),
                );
                return Ok(Some(ClaimOutcome::Exhausted));
            }
            ("timed_out", _) => {
                let instance: Option<String> = row.get("claimed_instance");
                let attempt = decode_messages(&row).attempt_count;
                tracing::warn!(
                    target: "steadfast_pg",
                    event = "steadfast.claim_timed_out",
                    instance_id = instance.as_deref().unwrap_or(""),
                    attempt_count = attempt,
                    "the claim ran out of statement_timeout reading its instance; the attempt is counted and the instance backs off"
                );
                return Ok(None);
            }
            _ => return Ok(Some(ClaimOutcome::Empty(row.get("next_visible_ms")))),
        };
        let settled = self.settle_claim(&row, sent, lease).await;
        // Handed out, or settled here (dead-lettered, abandoned, taken over): nothing to
        // give back. An error leaves the guard armed.
        if settled.is_ok() {
            guard.disarm();
        }
        settled
    }

    /// Turn a claim into an item for the runtime, or settle what cannot be handed out.
    async fn settle_claim(
        &self,
        row: &PgRow,
        sent: Instant,
        lease: Duration,
    ) -> Result<Attempt, ProviderError> {
        let instance: String = row.get("claimed_instance");
        let token: String = row.get("token");
        // Timers are not read here: the queue is not known to be empty after this claim.
        let rest = Rest {
            more_ready: row.get::<Option<bool>, _>("more_ready").unwrap_or(true),
            next_visible_ms: None,
        };
        let claimed = decode_messages(row);

        if !claimed.undecodable.is_empty() {
            // A message that cannot be decoded can never be processed: dead-letter the
            // batch's undecodable rows now rather than redeliver them forever.
            let mut tx = self.hold_claim(&token).await?;
            self.dead_letter_undecodable(&mut tx, &claimed.undecodable, &claimed.errors.join("; "))
                .await?;
            if claimed.messages.is_empty() {
                self.query(&self.q.orch_lease_release)
                    .bind(&instance)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| db_error(FETCH, e))?;
                tx.commit().await.map_err(|e| db_error(FETCH, e))?;
                return Ok(None);
            }
            tx.commit().await.map_err(|e| db_error(FETCH, e))?;
        }
        let Some(loaded) = instance_of(row, &instance, &claimed.messages) else {
            self.abandon_orchestration(&token, None, true).await?;
            return Ok(None);
        };
        let kv_snapshot = if loaded.history_error.is_some() {
            HashMap::new()
        } else {
            decode_kv(row)
        };
        if sent.elapsed() >= RESTAMP_AFTER {
            let left: Option<f64> = self
                .scalar(&self.q.orch_lease_restamp)
                .bind(&token)
                .bind(millis(lease))
                .fetch_one_on(self, FETCH)
                .await?;
            if left.is_none() {
                // Someone else holds or took the lease meanwhile: do not hand it out.
                return Ok(None);
            }
        }
        self.leases.stamped(&token, lease);
        let item = OrchestrationItem {
            instance,
            orchestration_name: loaded.name,
            execution_id: loaded.execution_id,
            version: loaded.version,
            history: loaded.history,
            messages: claimed.messages,
            history_error: loaded.history_error,
            kv_snapshot,
        };
        Ok(Some(ClaimOutcome::Claimed(
            (item, token, claimed.attempt_count),
            rest,
        )))
    }

    /// One diagnostic per instance the claim statement stopped instead of handing it out
    /// (what it did is already committed): `AttemptCeilingEnforced` at the ceiling,
    /// `HistoryTooLarge` over a history limit.
    fn report_ceilings(&self, row: &PgRow) {
        let stopped: Option<Vec<String>> = row.get("stopped");
        if stopped.as_ref().is_some_and(|s| !s.is_empty()) {
            // Failing an execution may have notified its parent.
            self.enqueued(Enqueued::ORCHESTRATOR);
        }
        let max_attempts = self.options.claim.max_attempts;
        for text in stopped.unwrap_or_default() {
            let Ok(s) = serde_json::from_str::<StoppedInstance>(&text) else {
                tracing::error!(target: "steadfast_pg", stopped = %text, "the claim stopped an instance but its report cannot be read");
                continue;
            };
            if s.failed {
                self.announce_end(&s.instance);
            }
            let history = s.reason == "history_too_large";
            let outcome = match (s.execution_id, s.failed) {
                (None, _) => "could not fail the execution (the dead letter's error says why)",
                (Some(_), true) if history => "failed the execution",
                (Some(_), true) => "failed the execution as poison",
                (Some(_), false) => "execution already terminal; dead-lettered only",
            };
            let moved = s.moved.unwrap_or(0);
            let mut d = if history {
                Diagnostic::new(
                    DiagnosticKind::HistoryTooLarge,
                    QueueKind::Orchestrator,
                    format!("history over claim.max_history_events or claim.max_history_bytes; the claim {outcome} and moved {moved} message(s) to dead letters (reason history_too_large)"),
                )
                .attempts(None, max_attempts)
            } else {
                let handed_out = max_attempts.map(|m| m.saturating_add(1));
                Diagnostic::new(
                    DiagnosticKind::AttemptCeilingEnforced,
                    QueueKind::Orchestrator,
                    format!("message handed out {} times; the claim {outcome} and moved {moved} message(s) to dead letters", handed_out.unwrap_or(0)),
                )
                .attempts(handed_out, max_attempts)
            }
            .instance(&s.instance)
            .message_kind(s.kinds.unwrap_or_default());
            if let Some(e) = s.execution_id {
                d = d.execution(e.max(0) as u64);
            }
            self.diagnostics.emit(d);
        }
    }

    /// A transaction holding the lease row of a claim this fetch just made.
    async fn hold_claim(
        &self,
        token: &str,
    ) -> Result<Transaction<'static, Postgres>, ProviderError> {
        let mut tx = self.begin(FETCH).await?;
        let held = self
            .query(&self.q.orch_lease_lock_by_token)
            .bind(token)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(FETCH, e))?;
        if held.is_none() {
            return Err(ProviderError::retryable(
                FETCH,
                "a just-claimed lease was taken over before it could be settled",
            ));
        }
        Ok(tx)
    }
}
