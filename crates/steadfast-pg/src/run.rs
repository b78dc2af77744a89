//! The one place a standalone statement (one outside a claim or ack transaction) is run.
//!
//! In [`PollingMode::SessionFree`](crate::PollingMode) every statement runs inside its own
//! transaction: sqlx sends an unnamed statement's Parse/Describe and its Bind/Execute in
//! separate round trips, and a transaction-mode pooler (PgBouncer) may route them to
//! different server connections unless a transaction pins one. Found by running the
//! validation suite through PgBouncer 1.18 in transaction mode.

use futures_core::future::BoxFuture;
use sqlx::postgres::{PgArguments, PgQueryResult, PgRow};
use sqlx::query::{Query, QueryScalar};
use sqlx::{Decode, Postgres, Type};

use duroxide::providers::ProviderError;
use tokio::sync::oneshot;

use crate::provider::PostgresProvider;

/// A statement with bound parameters, as `PostgresProvider::query` makes them.
pub(crate) type PgQuery<'q> = Query<'q, Postgres, PgArguments>;

/// Run `$body` (a statement on the executor `$exec`) standalone; evaluates to a
/// `Result<_, ProviderError>`. With a provider, its pool and mode; or with a pool and
/// whether it is session-free, for code that has no provider at hand (detached tasks).
macro_rules! run_standalone {
    ($p:expr, $op:expr, |$exec:ident| $body:expr) => {
        $crate::run::run_standalone!(&$p.pool, $p.session_free(), $op, |$exec| $body)
    };
    ($pool:expr, $session_free:expr, $op:expr, |$exec:ident| $body:expr) => {{
        if $session_free {
            let mut tx = $pool
                .begin()
                .await
                .map_err(|e| $crate::error::db_error($op, e))?;
            let out = {
                let $exec = &mut *tx;
                $body.await.map_err(|e| $crate::error::db_error($op, e))?
            };
            tx.commit()
                .await
                .map_err(|e| $crate::error::db_error($op, e))?;
            Ok(out)
        } else {
            let $exec = $pool;
            $body.await.map_err(|e| $crate::error::db_error($op, e))
        }
    }};
}
pub(crate) use run_standalone;

pub(crate) trait RunQuery<'q> {
    fn fetch_all_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<Vec<PgRow>, ProviderError>>
    where
        'q: 'a;
    fn fetch_optional_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<Option<PgRow>, ProviderError>>
    where
        'q: 'a;
    fn fetch_one_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<PgRow, ProviderError>>
    where
        'q: 'a;
    fn execute_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<PgQueryResult, ProviderError>>
    where
        'q: 'a;
}

impl<'q> RunQuery<'q> for Query<'q, Postgres, PgArguments> {
    fn fetch_all_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<Vec<PgRow>, ProviderError>>
    where
        'q: 'a,
    {
        Box::pin(async move { run_standalone!(p, op, |e| self.fetch_all(e)) })
    }

    fn fetch_optional_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<Option<PgRow>, ProviderError>>
    where
        'q: 'a,
    {
        Box::pin(async move { run_standalone!(p, op, |e| self.fetch_optional(e)) })
    }

    fn fetch_one_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<PgRow, ProviderError>>
    where
        'q: 'a,
    {
        Box::pin(async move { run_standalone!(p, op, |e| self.fetch_one(e)) })
    }

    fn execute_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<PgQueryResult, ProviderError>>
    where
        'q: 'a,
    {
        Box::pin(async move { run_standalone!(p, op, |e| self.execute(e)) })
    }
}

pub(crate) trait RunScalar<'q, O> {
    fn fetch_one_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<O, ProviderError>>
    where
        'q: 'a;
    fn fetch_optional_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<Option<O>, ProviderError>>
    where
        'q: 'a;
    fn fetch_all_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<Vec<O>, ProviderError>>
    where
        'q: 'a;
}

impl<'q, O> RunScalar<'q, O> for QueryScalar<'q, Postgres, O, PgArguments>
where
    O: Send + Unpin + for<'r> Decode<'r, Postgres> + Type<Postgres> + 'q,
{
    fn fetch_one_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<O, ProviderError>>
    where
        'q: 'a,
    {
        Box::pin(async move { run_standalone!(p, op, |e| self.fetch_one(e)) })
    }

    fn fetch_optional_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<Option<O>, ProviderError>>
    where
        'q: 'a,
    {
        Box::pin(async move { run_standalone!(p, op, |e| self.fetch_optional(e)) })
    }

    fn fetch_all_on<'a>(
        self,
        p: &'a PostgresProvider,
        op: &'a str,
    ) -> BoxFuture<'a, Result<Vec<O>, ProviderError>>
    where
        'q: 'a,
    {
        Box::pin(async move { run_standalone!(p, op, |e| self.fetch_all(e)) })
    }
}

impl PostgresProvider {
    /// Run one statement that returns one row on its own task. A caller's future dropped
    /// mid-flight (the runtime drops in-flight fetches at shutdown) then cannot cut the
    /// statement off half-way: in session-free mode it runs inside a transaction, which
    /// would otherwise roll back after concurrent claims had already skipped its rows as
    /// taken. The task always finishes, and `settle` runs on it with the row: what it
    /// returns (a [`ClaimGuard`](crate::give_back::ClaimGuard)) is dropped on that task
    /// when nobody awaits the result any more, while `close()` still waits for it.
    pub(crate) async fn fetch_one_detached<G: Send + 'static>(
        &self,
        op: &'static str,
        sql: &str,
        args: PgArguments,
        settle: impl FnOnce(&PgRow) -> G + Send + 'static,
    ) -> Result<(PgRow, G), ProviderError> {
        let pool = self.pool.clone();
        let sql = sql.to_owned();
        let session_free = self.session_free();
        let (reply, result) = oneshot::channel();
        self.in_flight.spawn(async move {
            let run = async {
                let query = sqlx::query_with(&sql, args).persistent(!session_free);
                let row: PgRow = run_standalone!(&pool, session_free, op, |e| query.fetch_one(e))?;
                let settled = settle(&row);
                Ok((row, settled))
            };
            // Unsent (the caller is gone), the result is dropped right here.
            let _ = reply.send(run.await);
        });
        result.await.map_err(|_| {
            ProviderError::retryable(op, "statement task ended abnormally (panicked)")
        })?
    }
}
