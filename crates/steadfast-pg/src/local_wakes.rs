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
//! hear something after the last one stopped), so that a notification wakes this
//! process once, not once per provider. A provider with
//! `ProviderOptions::share_wakes_in_process` off gets wake-ups of its own, as if it were
//! in a process of its own.
//!
//! The database is known by the URL's host, port, socket and database name as given: the
//! same database reached under two names (or once through a pooler and once directly)
//! shares nothing, which costs only the wake-up, never a message.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use sqlx::postgres::PgConnectOptions;
use tokio::sync::broadcast;

use crate::queue_wake::QueueWake;
use crate::schema::SchemaName;

/// How many ended-execution wake-ups a slow waiter may fall behind before it re-reads.
const ENDED_BACKLOG: usize = 1024;

/// One process's wake-ups for one database and schema.
pub(crate) struct LocalWakes {
    pub(crate) orchestrator: Arc<QueueWake>,
    pub(crate) worker: Arc<QueueWake>,
    pub(crate) ended: broadcast::Sender<Arc<str>>,
    /// Names this process's notifications, so that its listeners pass over them.
    pub(crate) nonce: String,
    /// The listener that passes notifications on ([`Self::forwards`]); 0 = none.
    forwarder: AtomicU64,
}

impl LocalWakes {
    fn new() -> Self {
        Self {
            orchestrator: Arc::default(),
            worker: Arc::default(),
            ended: broadcast::channel(ENDED_BACKLOG).0,
            nonce: crate::token::new_nonce(),
            forwarder: AtomicU64::new(0),
        }
    }

    /// Whether listener `id` (never 0) passes on what it hears: it does if it already
    /// does, or if no listener does.
    pub(crate) fn forwards(&self, id: u64) -> bool {
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

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    host: String,
    port: u16,
    socket: Option<PathBuf>,
    database: Option<String>,
    schema: String,
}

static SHARED: LazyLock<Mutex<HashMap<Key, Weak<LocalWakes>>>> = LazyLock::new(Mutex::default);
