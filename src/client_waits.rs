//! Client waits that an `AbortSignal` can end. JS registers a wait with [`begin_wait`],
//! which hands out its id, before it starts the wait (so an abort can never arrive before
//! the registration), aborts it with [`abort_wait`], and ends it with [`end_wait`]; the wait
//! itself runs under [`abortable`] and gives up with `ERR_STEADFAST_ABORTED` once aborted,
//! so no native wait outlives the JS call (on PostgreSQL it would keep reading the status
//! until its timeout).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex};

use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::errors::{Code, error};

/// One registry per process, shared by every JS thread that loaded the addon (worker threads
/// included), so the ids come from here too and never collide between threads.
static WAITS: LazyLock<Mutex<HashMap<u32, CancellationToken>>> = LazyLock::new(Default::default);
static LAST_ID: AtomicU32 = AtomicU32::new(0);

fn waits() -> std::sync::MutexGuard<'static, HashMap<u32, CancellationToken>> {
    WAITS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Register a wait (before the wait call that carries its id); returns the id.
#[napi(catch_unwind)]
pub fn begin_wait() -> u32 {
    let id = LAST_ID.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
    waits().insert(id, CancellationToken::new());
    id
}

/// Abort wait `id`: it rejects with `ERR_STEADFAST_ABORTED`. Unknown ids are ignored.
#[napi(catch_unwind)]
pub fn abort_wait(id: u32) {
    if let Some(token) = waits().get(&id) {
        token.cancel();
    }
}

/// Forget wait `id` (after the wait call settled, whichever way).
#[napi(catch_unwind)]
pub fn end_wait(id: u32) {
    waits().remove(&id);
}

/// `wait`, ended early when wait `id` is aborted. Without an id, or with one that was never
/// begun, it is just `wait`.
pub(crate) async fn abortable<T>(
    id: Option<u32>,
    wait: impl Future<Output = napi::Result<T>>,
) -> napi::Result<T> {
    let token = id.and_then(|id| waits().get(&id).cloned());
    let Some(token) = token else {
        return wait.await;
    };
    tokio::select! {
        biased;
        () = token.cancelled() => Err(error(Code::Aborted, "the wait was aborted")),
        settled = wait => settled,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_aborted_wait_ends_at_once_and_an_unaborted_one_runs_out() {
        let first = begin_wait();
        abort_wait(first);
        let aborted = abortable(Some(first), std::future::pending::<napi::Result<()>>()).await;
        assert!(
            aborted
                .unwrap_err()
                .reason
                .contains("ERR_STEADFAST_ABORTED")
        );
        end_wait(first);
        let second = begin_wait();
        assert_ne!(second, first);
        assert_eq!(abortable(Some(second), async { Ok(5) }).await.unwrap(), 5);
        end_wait(second);
        assert!(waits().is_empty());
        assert_eq!(
            abortable(Some(second + 1), async { Ok(6) }).await.unwrap(),
            6
        );
    }
}
