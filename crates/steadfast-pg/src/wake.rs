//! Wake-ups of long-polling fetches, with no NOTIFY inside any enqueue's transaction.
//!
//! A NOTIFY takes a cluster-wide lock at commit and keeps it until the commit record is
//! flushed, so commits that notify are flushed one at a time. Here an enqueue commits
//! without one; afterwards the provider calls [`Wakes::enqueued`], which wakes an idle
//! fetch of this process at once and asks the publisher task for one NOTIFY. The task
//! sends them one at a time in their own statement, on a connection of its own whose
//! commits do not wait for their flush (`synchronous_commit` off: a notification lost in
//! a crash costs a recheck, and waiting for the flush would add one flush per wake-up
//! to every enqueue's latency); every request made while one is in flight, or less than
//! [`PUBLISH_GAP`] after it, is folded into the next, so a process sends at most one per
//! gap however many enqueues it commits. Other processes' listeners wake one idle fetch
//! per queue named (of each provider in the process); a listener passes over its own
//! process's notifications (its fetches were woken directly). A woken fetch that claims
//! something passes the wake on (`polling.rs`).
//!
//! Payload: the queues (`o`, `w` or `ow`), a space, the sending process's nonce.
//!
//! Ended executions go by one notification per instance on the `_end` channel, whose
//! payload is the instance id cut to [`END_PAYLOAD_CHARS`] characters (a payload must stay
//! under 8000 bytes; a waiter compares only that much, and a false wake costs one status
//! read); this process's waiters hear it through its listener too. In session-free mode,
//! with no listener, waiters of this process are told directly, and nothing else.
//!
//! The providers of one process on the same database and schema share these wake-ups
//! and the nonce, and one listener among them passes on what it hears
//! (`local_wakes.rs`).

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use duroxide::providers::WorkItem;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use tokio::sync::{Notify, broadcast};
use tokio::task::JoinHandle;

use crate::database_url::Scrubber;
use crate::diagnostics::QueueKind;
use crate::error::SetupError;
use crate::local_wakes::{Listening, LocalWakes, ProviderWakes};
use crate::queue_wake::QueueWake;
use crate::schema::SchemaName;
use crate::session_wakes::WaitingOwners;
use crate::watched_starts::{WatchedStarts, end_key};

/// How much of an instance id an ended-execution notification carries.
pub(crate) const END_PAYLOAD_CHARS: usize = 1000;

const ORCHESTRATOR: u8 = 1;
const WORKER: u8 = 2;

/// The least time between two notifications of one process. Each is a transaction of its
/// own; sent as soon as asked, a process sent one per enqueue under load (about two per
/// orchestration in the throughput benchmark, docs/benchmarks.md run 16), since one
/// seldom had anything to fold into it. The gap bounds them (at most 200 a second per
/// process) and delays only other processes' wake-ups, by at most the gap (this process's
/// fetches are woken directly).
const PUBLISH_GAP: Duration = Duration::from_millis(5);

/// How long provider start-up waits for the publisher's connection.
const PUBLISHER_CONNECT_WAIT: Duration = Duration::from_secs(5);

/// After a failed NOTIFY, the publisher waits this long before it tries again (the
/// requests stay pending; fetches still recheck on their own).
const PUBLISH_RETRY: Duration = Duration::from_millis(200);

/// What woke a session owner's fetch (`session_wakes.rs`), as the metric labels it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OwnerWakeVia {
    /// A woken fetch that found nothing looked the owner up.
    Lookup,
    /// The ack of a turn that scheduled the session's activity.
    Ack,
}

impl OwnerWakeVia {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OwnerWakeVia::Lookup => "lookup",
            OwnerWakeVia::Ack => "ack",
        }
    }
}

/// Which queues a committed write made work visible on.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Enqueued(u8);

impl Enqueued {
    pub(crate) const NONE: Self = Self(0);
    pub(crate) const ORCHESTRATOR: Self = Self(ORCHESTRATOR);
    pub(crate) const WORKER: Self = Self(WORKER);

    pub(crate) fn of(queue: QueueKind) -> Self {
        match queue {
            QueueKind::Orchestrator => Self::ORCHESTRATOR,
            QueueKind::Worker => Self::WORKER,
        }
    }

    /// `ORCHESTRATOR` if `orchestrator`, plus `WORKER` if `worker`.
    pub(crate) fn when(orchestrator: bool, worker: bool) -> Self {
        Self(if orchestrator { ORCHESTRATOR } else { 0 } | if worker { WORKER } else { 0 })
    }

    pub(crate) fn and(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    fn has(self, queue: u8) -> bool {
        self.0 & queue != 0
    }
}

/// This process's wake-ups (shared with its other providers on the same database and
/// schema: `local_wakes.rs`), and the listen and publisher tasks that carry them between
/// processes (none in session-free mode, which keeps no session: there this process's
/// fetches are still woken by its own enqueues, and find other processes' work when they
/// recheck).
pub(crate) struct Wakes {
    local: Arc<LocalWakes>,
    /// This provider's waiting fetches, among those `local` wakes.
    own: Arc<ProviderWakes>,
    across_processes: Option<AcrossProcesses>,
}

/// LISTEN and NOTIFY between processes.
struct AcrossProcesses {
    /// This provider's listener, among those sharing its [`LocalWakes`].
    listener_id: u64,
    publish: Arc<Publish>,
    publisher_pool: PgPool,
    tasks: [JoinHandle<()>; 2],
}

/// Requests for the publisher task: pending queue bits, ended instances, its wake-up.
#[derive(Default)]
struct Publish {
    pending: AtomicU8,
    ended: Mutex<Vec<String>>,
    kick: Notify,
}

impl Drop for Wakes {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Wakes {
    /// Wake-ups within this process only (session-free mode).
    pub(crate) fn in_process(local: Arc<LocalWakes>) -> Self {
        Self {
            own: local.join(),
            local,
            across_processes: None,
        }
    }

    /// LISTEN on the schema's channels and start the publisher, connected with `connect`
    /// (or, if that fails, when it first has something to send).
    pub(crate) async fn start(
        local: Arc<LocalWakes>,
        pool: &PgPool,
        connect: PgConnectOptions,
        schema: &SchemaName,
        scrubber: Scrubber,
    ) -> Result<Self, SetupError> {
        let connect_error = |e: sqlx::Error| SetupError::Connect(e.to_string());
        let channel: String = sqlx::query_scalar(include_str!("../queries/notify_channel.sql"))
            .bind(schema.as_str())
            .fetch_one(pool)
            .await
            .map_err(connect_error)?;
        // Other builds of this schema listen on the same two channels.
        let ended_channel = format!("{channel}_end");
        let mut listener = PgListener::connect_with(pool)
            .await
            .map_err(connect_error)?;
        listener
            .listen_all([channel.as_str(), ended_channel.as_str()])
            .await
            .map_err(connect_error)?;
        let publish = Arc::new(Publish::default());
        static LISTENER_IDS: AtomicU64 = AtomicU64::new(1);
        let listener_id = LISTENER_IDS.fetch_add(1, Ordering::Relaxed);
        let listen = tokio::spawn(listen(
            listener,
            ended_channel.clone(),
            local.listening(listener_id),
            scrubber.clone(),
        ));
        let publisher_pool = PgPoolOptions::new()
            .max_connections(1)
            .min_connections(0)
            .connect_lazy_with(connect.options([("synchronous_commit", "off")]));
        // Connected now rather than at the first enqueue, whose set-up (a new server
        // process, TLS) then competed with the process's first claims for the CPU: on a
        // 2-core machine the first fetch after the first enqueue took 64-128 ms instead of
        // 10-18, and its lease began that much later. Best effort, and bounded: if it fails
        // here, the publisher connects when it first sends.
        let _ = tokio::time::timeout(PUBLISHER_CONNECT_WAIT, publisher_pool.acquire()).await;
        let publisher = tokio::spawn(publish_loop(
            publisher_pool.clone(),
            [channel, ended_channel],
            local.nonce.clone(),
            Arc::clone(&publish),
            scrubber,
        ));
        Ok(Self {
            own: local.join(),
            local,
            across_processes: Some(AcrossProcesses {
                listener_id,
                publish,
                publisher_pool,
                tasks: [listen, publisher],
            }),
        })
    }

    /// The publisher's own pool (the listener's connection comes from the provider's).
    /// Kept here for the password follower and for `close()`, which closes it.
    pub(crate) fn publisher_pool(&self) -> Option<PgPool> {
        let across = self.across_processes.as_ref()?;
        Some(across.publisher_pool.clone())
    }

    /// Whether other processes' enqueues and ended executions are heard.
    pub(crate) fn across_processes(&self) -> bool {
        self.across_processes.is_some()
    }

    /// Work became visible on `queues` by a write that has committed: wake an idle fetch
    /// of each provider of this process per queue, and have the other processes told.
    pub(crate) fn enqueued(&self, queues: Enqueued) {
        self.enqueued_woken_but(queues, Enqueued::NONE);
    }

    /// As [`enqueued`](Self::enqueued), but no idle fetch of `woken` is woken here: its
    /// work's takers were woken already. Their queues are no longer known to be empty,
    /// as after any enqueue (`queue_wake.rs`).
    pub(crate) fn enqueued_woken_but(&self, queues: Enqueued, woken: Enqueued) {
        if queues == Enqueued::NONE {
            return;
        }
        wake_one_each(&self.local, Enqueued(queues.0 & !woken.0));
        if woken.has(WORKER) {
            self.local
                .each_provider(|provider| provider.worker.forget_empty());
        }
        if let Some(across) = &self.across_processes {
            across.publish.pending.fetch_or(queues.0, Ordering::AcqRel);
            across.publish.kick.notify_one();
        }
    }

    /// A turn's ack committed: its instance's lease ended (`queue_wake.rs`).
    pub(crate) fn turn_acked(&self) {
        self.local
            .each_provider(|provider| provider.orchestrator.forget_empty());
    }

    /// A write that has committed ended an execution of `instance`. With a listener, this
    /// process's waiters hear it as the others do, by the notification: told directly as
    /// well, every waiter of the process would wake twice for every end (the
    /// notifications carry no sender), as they did before session 30.
    pub(crate) fn ended_execution(&self, instance: &str) {
        let key = end_key(instance);
        let Some(across) = &self.across_processes else {
            self.local.end_heard(Arc::from(key.as_str()));
            return;
        };
        across
            .publish
            .ended
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(key);
        across.publish.kick.notify_one();
    }

    pub(crate) fn queue(&self, queue: QueueKind) -> Arc<QueueWake> {
        match queue {
            QueueKind::Orchestrator => Arc::clone(&self.own.orchestrator),
            QueueKind::Worker => Arc::clone(&self.own.worker),
        }
    }

    /// This provider's worker fetches by session owner (`session_wakes.rs`).
    pub(crate) fn session_owners(&self) -> Arc<WaitingOwners> {
        Arc::clone(&self.own.session_owners)
    }

    /// A fetch of this provider claimed an item of `session` for `owner`: from now on a
    /// woken worker claim that finds nothing looks for session owners to wake, and a turn
    /// acked here that schedules the session's activities wakes `owner`.
    pub(crate) fn session_claimed(&self, session: &str, owner: &str) {
        self.local.sessions_claimed.store(true, Ordering::Relaxed);
        self.local.session_owners_seen.claimed(session, owner);
    }

    /// `owner`'s fetch was woken for a session item and found nothing.
    pub(crate) fn forget_session_owner(&self, owner: &str) {
        self.local.session_owners_seen.forget_owner(owner);
    }

    /// Whether a provider of this process has claimed a session item.
    pub(crate) fn sessions_claimed(&self) -> bool {
        self.local.sessions_claimed.load(Ordering::Relaxed)
    }

    /// Wake a worker fetch of `owner` in this process, if one is under way, for `via` (the
    /// metric's label); whether one was.
    pub(crate) fn wake_session_owner(&self, owner: &str, via: OwnerWakeVia) -> bool {
        let mut woken = false;
        self.local
            .each_provider(|provider| woken |= provider.session_owners.wake(owner));
        if woken {
            crate::metrics::session_owner_woken(via);
        }
        woken
    }

    /// Wake the owners' fetches under way here of the session activities among `items`
    /// whose owners this process knows (an owner with none claims at its next fetch's
    /// start: [`Self::enqueued_woken_but`]); how many of `items` were such activities.
    pub(crate) fn wake_owners_of(&self, items: &[WorkItem]) -> usize {
        if !self.sessions_claimed() {
            return 0;
        }
        let mut routed = 0;
        for item in items {
            let WorkItem::ActivityExecute {
                session_id: Some(session),
                ..
            } = item
            else {
                continue;
            };
            if let Some(owner) = self.local.session_owners_seen.owner_of(session) {
                self.wake_session_owner(&owner, OwnerWakeVia::Ack);
                routed += 1;
            }
        }
        routed
    }

    pub(crate) fn ended(&self) -> broadcast::Receiver<Arc<str>> {
        self.local.ended()
    }

    /// This process's starts of new instances, watched for their end
    /// (`watched_starts.rs`).
    pub(crate) fn watched_starts(&self) -> &WatchedStarts {
        &self.local.watched_starts
    }

    pub(crate) fn stop(&self) {
        if let Some(across) = &self.across_processes {
            for task in &across.tasks {
                task.abort();
            }
            self.local.stopped_listening(across.listener_id);
        }
    }
}

/// Parse a wake-up payload: the queues it names, and whether this process sent it.
fn parse_payload(payload: &str, own_nonce: &str) -> (Enqueued, bool) {
    let (queues, sender) = payload.split_once(' ').unwrap_or((payload, ""));
    let named = Enqueued::when(queues.contains('o'), queues.contains('w'));
    (named, sender == own_nonce)
}

/// One idle fetch per queue in `queues` of each provider of the process.
fn wake_one_each(local: &LocalWakes, queues: Enqueued) {
    local.each_provider(|provider| {
        if queues.has(ORCHESTRATOR) {
            provider.orchestrator.wake_one();
        }
        if queues.has(WORKER) {
            provider.worker.wake_one();
        }
    });
}

async fn listen(
    mut listener: PgListener,
    ended_channel: String,
    listening: Listening,
    scrubber: Scrubber,
) {
    let local = &*listening.local;
    loop {
        // PgListener reconnects by itself: `Ok(None)` or an error means notifications
        // may have been lost, so every idle fetch and waiter looks again.
        let heard = listener.try_recv().await;
        if !listening.forwards() {
            if heard.is_err() {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            continue;
        }
        match heard {
            Ok(Some(n)) if n.channel() == ended_channel => {
                local.end_heard(Arc::from(n.payload()));
            }
            Ok(Some(n)) => {
                let (queues, own) = parse_payload(n.payload(), &local.nonce);
                if !own {
                    wake_one_each(local, queues);
                }
            }
            result => {
                local.each_provider(|provider| {
                    provider.orchestrator.wake_all();
                    provider.worker.wake_all();
                });
                local.end_heard(Arc::from(""));
                if let Err(e) = result {
                    tracing::debug!(target: "steadfast_pg", error = %scrubber.scrub(&e.to_string()), "listen connection error; retrying");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }
}

async fn publish_loop(
    pool: PgPool,
    [channel, ended_channel]: [String; 2],
    nonce: String,
    publish: Arc<Publish>,
    scrubber: Scrubber,
) {
    let sql = include_str!("../queries/wake_publish.sql");
    loop {
        publish.kick.notified().await;
        let bits = publish.pending.swap(0, Ordering::AcqRel);
        let ended = std::mem::take(&mut *publish.ended.lock().unwrap_or_else(|p| p.into_inner()));
        if bits == 0 && ended.is_empty() {
            continue;
        }
        let queues = Enqueued(bits);
        let payload = (bits != 0).then(|| {
            format!(
                "{}{} {nonce}",
                if queues.has(ORCHESTRATOR) { "o" } else { "" },
                if queues.has(WORKER) { "w" } else { "" },
            )
        });
        let sent = sqlx::query(sql)
            .bind(&channel)
            .bind(&payload)
            .bind(&ended_channel)
            .bind(&ended)
            .execute(&pool)
            .await;
        if let Err(e) = sent {
            tracing::debug!(target: "steadfast_pg", error = %scrubber.scrub(&e.to_string()), "wake-up notification failed; retrying");
            // The queues are asked again; the ended instances are not: their waiters read
            // the status again within a second anyway (`wait.rs`).
            publish.pending.fetch_or(bits, Ordering::AcqRel);
            tokio::time::sleep(PUBLISH_RETRY).await;
            publish.kick.notify_one();
        } else {
            // Requests meanwhile leave their bits and a permit on `kick`: the next round
            // sends them all at once.
            tokio::time::sleep(PUBLISH_GAP).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_name_their_queues_and_sender() {
        assert_eq!(
            parse_payload("o abc", "abc"),
            (Enqueued::ORCHESTRATOR, true)
        );
        assert_eq!(
            parse_payload("ow abc", "xyz"),
            (Enqueued::when(true, true), false)
        );
        assert_eq!(parse_payload("w", "xyz"), (Enqueued::WORKER, false));
        assert_eq!(parse_payload("", "xyz"), (Enqueued::NONE, false));
    }
}
