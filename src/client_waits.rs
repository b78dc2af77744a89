//! Client waits that an `AbortSignal` can end. JS picks an id, registers it with
//! [`begin_wait`] before it starts the wait (so an abort can never arrive before the
//! registration), aborts it with [`abort_wait`], and ends it with [`end_wait`]; the wait
//! itself runs under [`abortable`] and gives up with `ERR_STEADFAST_ABORTED` once aborted,
//! so no native wait outlives the JS call (on PostgreSQL it would keep reading the status
//! until its timeout).

use std::collections::HashMap;
use std::future::Future;
use std::sync::{LazyLock, Mutex};

use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::errors::{Code, error};

static WAITS: LazyLock<Mutex<HashMap<u32, CancellationToken>>> = LazyLock::new(Default::default);

fn waits() -> std::sync::MutexGuard<'static, HashMap<u32, CancellationToken>> {
    WAITS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Register wait `id` (before the wait call that carries it).
#[napi(catch_unwind)]
pub fn begin_wait(id: u32) {
    waits().insert(id, CancellationToken::new());
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
        begin_wait(7);
        abort_wait(7);
        let aborted = abortable(Some(7), std::future::pending::<napi::Result<()>>()).await;
        assert!(
            aborted
                .unwrap_err()
                .reason
                .contains("ERR_STEADFAST_ABORTED")
        );
        end_wait(7);
        begin_wait(8);
        assert_eq!(abortable(Some(8), async { Ok(5) }).await.unwrap(), 5);
        end_wait(8);
        assert!(waits().is_empty());
        assert_eq!(abortable(Some(9), async { Ok(6) }).await.unwrap(), 6);
    }
}
