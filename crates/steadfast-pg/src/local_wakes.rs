//! The wake-ups of one process, shared by every provider in it on the same database and
//! schema.
//!
//! In Node a `Runtime` and a `Client` each open a provider of their own; before these
//! were shared, a start committed through the client's provider reached the runtime's
//! waiting fetch only by `NOTIFY` (`Listen`: a publish gap and a round trip through the
//! server) or at the fetch's recheck (`SessionFree`: up to `claim.long_poll_recheck`).
//! Shared, it wakes the fetch at once, and the listeners of these providers pass over the
//! notifications any of them sent (one nonce for all). Each listening provider has its
//! own listener, but only one of them at a time passes what it hears on (the first to
//! hear something after the last one stopped, or after the last one's task ended
//! however it ended), so that a notification is heard once in this process, not once
//! per provider. A wake-up (an enqueue of this process or a notification) wakes one
//! waiting fetch of each provider: providers may take different work (two runtimes with
//! different version ranges or tags), and a fetch that is woken for work it cannot take
//! finds nothing and does not pass the wake-up on (a fetch that claims something does,
//! `polling.rs`). A provider with
//! `ProviderOptions::share_wakes_in_process` off gets wake-ups of its own, as if it were
//! in a process of its own.
//!
//! The database is known by the URL's host, port, socket and database name as given: the
//! same database reached under two names (or once through a pooler and once directly)
//! shares nothing, which costs only the wake-up, never a message.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock, Weak};

use sqlx::postgres::PgConnectOptions;
use tokio::sync::broadcast;

use crate::queue_wake::QueueWake;
use crate::schema::SchemaName;
use crate::session_wakes::{SessionOwnersSeen, WaitingOwners};
use crate::watched_starts::WatchedStarts;

/// How many ended-execution wake-ups a slow waiter may fall behind before it re-reads.
const ENDED_BACKLOG: usize = 1024;

/// One provider's waiting fetches, per queue, and its worker fetches by session owner.
#[derive(Default)]
pub(crate) struct ProviderWakes {
    pub(crate) orchestrator: Arc<QueueWake>,
    pub(crate) worker: Arc<QueueWake>,
    pub(crate) session_owners: Arc<WaitingOwners>,
}

/// One process's wake-ups for one database and schema.
pub(crate) struct LocalWakes {
    /// The providers sharing these, pruned as they are dropped.
    providers: RwLock<Vec<Weak<ProviderWakes>>>,
    /// Ended executions' end keys, as [`Self::end_heard`] passes them on.
    ended: broadcast::Sender<Arc<str>>,
    /// Starts of new instances this process made, watched for their end.
    pub(crate) watched_starts: WatchedStarts,
    /// Names this process's notifications, so that its listeners pass over them.
    pub(crate) nonce: String,
    /// The listener that passes notifications on ([`Self::forwards`]); 0 = none.
    forwarder: AtomicU64,
    /// Whether a provider of the process has claimed a session item (`session_wakes.rs`).
    pub(crate) sessions_claimed: AtomicBool,
    /// Who owned each session whose item a fetch of the process claimed.
    pub(crate) session_owners_seen: SessionOwnersSeen,
}

impl LocalWakes {
    fn new() -> Self {
        Self {
            providers: RwLock::default(),
            ended: broadcast::channel(ENDED_BACKLOG).0,
            watched_starts: WatchedStarts::default(),
            nonce: crate::token::new_nonce(),
            forwarder: AtomicU64::new(0),
            sessions_claimed: AtomicBool::new(false),
            session_owners_seen: SessionOwnersSeen::default(),
        }
    }

    /// The waiting fetches of a new provider, which are woken with those of every other.
    pub(crate) fn join(&self) -> Arc<ProviderWakes> {
        let joined = Arc::new(ProviderWakes::default());
        let mut providers = self.providers.write().unwrap_or_else(|p| p.into_inner());
        providers.retain(|p| p.strong_count() > 0);
        providers.push(Arc::downgrade(&joined));
        joined
    }

    /// An end of the instance with end key `key` was heard ("": ends may have been
    /// missed): its start is no longer watched, then its waiters are woken, in that order,
    /// since a wait subscribes before it looks at the watch (`watched_starts.rs`).
    pub(crate) fn end_heard(&self, key: Arc<str>) {
        self.watched_starts.end_heard(&key);
        let _ = self.ended.send(key);
    }

    /// Ended executions from now on ([`Self::end_heard`]).
    pub(crate) fn ended(&self) -> broadcast::Receiver<Arc<str>> {
        self.ended.subscribe()
    }

    /// Run `f` on the waiting fetches of each provider still open.
    pub(crate) fn each_provider(&self, mut f: impl FnMut(&ProviderWakes)) {
        let providers = self.providers.read().unwrap_or_else(|p| p.into_inner());
        for provider in providers.iter().filter_map(Weak::upgrade) {
            f(&provider);
        }
    }

    /// Listener `id` passes on what it hears while the returned guard lives, if
    /// [`Self::forwards`] says so; the slot is given up when the guard is dropped, also
    /// when the listener's task panics or is aborted.
    pub(crate) fn listening(self: &Arc<Self>, id: u64) -> Listening {
        Listening {
            local: Arc::clone(self),
            id,
        }
    }

    /// Whether listener `id` (never 0) passes on what it hears: it does if it already
    /// does, or if no listener does.
    fn forwards(&self, id: u64) -> bool {
        match self
            .forwarder
            .compare_exchange(0, id, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => true,
            Err(current) => current == id,
        }
    }

    /// Listener `id` stopped: another takes over at the next notification it hears.
    pub(crate) fn stopped_listening(&self, id: u64) {
        let _ = self
            .forwarder
            .compare_exchange(id, 0, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The wake-ups of the providers of this process on `connect`'s database and
    /// `schema`, if `shared`; else wake-ups of the caller's own.
    pub(crate) fn for_provider(
        connect: &PgConnectOptions,
        schema: &SchemaName,
        shared: bool,
    ) -> Arc<Self> {
        if !shared {
            return Arc::new(Self::new());
        }
        let key = Key {
            host: connect.get_host().to_owned(),
            port: connect.get_port(),
            socket: connect.get_socket().cloned(),
            database: connect.get_database().map(str::to_owned),
            schema: schema.as_str().to_owned(),
        };
        let mut all = SHARED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = all.get(&key).and_then(Weak::upgrade) {
            return found;
        }
        // Entries of providers that are all gone are dropped whenever one is added, so the
        // map holds at most the live ones plus those dropped since the last addition.
        all.retain(|_, wakes| wakes.strong_count() > 0);
        let wakes = Arc::new(Self::new());
        all.insert(key, Arc::downgrade(&wakes));
        wakes
    }
}

/// A listener of this process, among those sharing its [`LocalWakes`].
pub(crate) struct Listening {
    pub(crate) local: Arc<LocalWakes>,
    id: u64,
}

impl Listening {
    /// Whether this listener passes on what it hears ([`LocalWakes::forwards`]).
    pub(crate) fn forwards(&self) -> bool {
        self.local.forwards(self.id)
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.local.stopped_listening(self.id);
    }
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    host: String,
    port: u16,
    socket: Option<PathBuf>,
    database: Option<String>,
    schema: String,
}

static SHARED: LazyLock<Mutex<HashMap<Key, Weak<LocalWakes>>>> = LazyLock::new(Mutex::default);

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listener_whose_task_panics_gives_up_passing_on() {
        let local = Arc::new(LocalWakes::new());
        let listening = local.listening(7);
        let task = tokio::spawn(async move {
            assert!(listening.forwards(), "the first listener to hear passes on");
            panic!("the listener's task dies");
        });
        assert!(task.await.unwrap_err().is_panic());
        assert!(
            local.forwards(8),
            "another listener of the process takes over at the next notification"
        );
    }

    #[test]
    fn a_stopped_listener_does_not_take_the_slot_back_from_its_successor() {
        let local = Arc::new(LocalWakes::new());
        let listening = local.listening(7);
        assert!(listening.forwards());
        local.stopped_listening(7);
        assert!(local.forwards(8));
        drop(listening);
        assert!(local.forwards(8), "8 still passes on");
        assert!(!local.forwards(9));
    }

    #[test]
    fn a_closed_provider_is_no_longer_woken() {
        let local = LocalWakes::new();
        let kept = local.join();
        drop(local.join());
        let mut woken = 0;
        local.each_provider(|_| woken += 1);
        assert_eq!(woken, 1);
        drop(kept);
    }
}
