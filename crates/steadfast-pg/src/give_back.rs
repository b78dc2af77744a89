//! Claims nobody received are given back.
//!
//! A fetch can be cancelled after its claim committed: the runtime drops in-flight
//! fetches when it shuts down, and a caller may wrap a fetch in a timeout. The claim
//! statement runs on its own task (see `fetch_one_detached`), so it finishes anyway, and
//! without this the instance (or work item) would stay leased to nobody until the lease
//! ran out, with one attempt counted against a turn that never ran. Each claim is therefore armed with
//! a [`ClaimGuard`] until the item is handed to the runtime (or settled); a guard dropped
//! while armed gives the claim back on a task of the provider's `in_flight` tracker,
//! which `close()` waits for before it closes the pool.

use std::sync::Arc;

use sqlx::PgPool;
use tokio_util::task::TaskTracker;

use crate::run::run_standalone;

const OP: &str = "give_back_claim";

/// Everything a guard needs to give a claim back after its fetch is gone.
#[derive(Clone)]
pub(crate) struct GiveBack {
    pool: PgPool,
    sql: Arc<str>,
    session_free: bool,
    tasks: TaskTracker,
}

impl GiveBack {
    pub(crate) fn new(pool: PgPool, sql: &str, session_free: bool, tasks: TaskTracker) -> Self {
        Self {
            pool,
            sql: Arc::from(sql),
            session_free,
            tasks,
        }
    }

    /// A guard for the claim holding `token`.
    pub(crate) fn arm(&self, token: String) -> ClaimGuard {
        ClaimGuard {
            token: Some(token),
            give_back: self.clone(),
        }
    }

    async fn run(self, token: String) {
        match self.give_back(&token).await {
            Ok(true) => {
                tracing::debug!(target: "steadfast_pg", "gave back a claim whose fetch was cancelled")
            }
            Ok(false) => {}
            Err(e) => tracing::warn!(
                target: "steadfast_pg",
                error = %e,
                "could not give back a claim whose fetch was cancelled; its lease runs out instead"
            ),
        }
    }

    async fn give_back(&self, token: &str) -> Result<bool, duroxide::providers::ProviderError> {
        let query = sqlx::query_scalar::<_, bool>(&self.sql)
            .persistent(!self.session_free)
            .bind(token);
        run_standalone!(&self.pool, self.session_free, OP, |e| query.fetch_one(e))
    }
}

/// A claim that has not reached the runtime yet. Dropped while armed, it gives the claim
/// back; [`ClaimGuard::disarm`] once the item is handed out or the claim was settled.
pub(crate) struct ClaimGuard {
    token: Option<String>,
    give_back: GiveBack,
}

impl ClaimGuard {
    pub(crate) fn disarm(mut self) {
        self.token = None;
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        let Some(token) = self.token.take() else {
            return;
        };
        // Without a runtime (the process is exiting) the lease simply runs out.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let give_back = self.give_back.clone();
        self.give_back
            .tasks
            .spawn_on(give_back.run(token), &runtime);
    }
}
