//! Lease renewals ride out transient database errors.
//!
//! duroxide treats any error from a renewal as "the lease is gone": for an activity it
//! cancels the work and, once the activity has returned, acks the item *without its
//! result*. A dropped connection, a restarting server or a pool that is momentarily
//! exhausted says nothing about the lease, so a renewal retries such errors until the
//! lease it renews has certainly ended; only the database's answer ("no live lease with
//! this token") or a permanent error ends it early. Ordinary turn acks ride them out the
//! same way, for as long as their lease may live (`lease_book.rs`).

use std::future::Future;
use std::time::{Duration, Instant};

use duroxide::providers::ProviderError;

const FIRST_PAUSE: Duration = Duration::from_millis(25);
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// Run `attempt` until it succeeds, fails permanently, or `lease_bound` has passed since
/// the call. `lease_bound` must be at least the time left on the lease being renewed: the
/// runtime renews with the lease length it claimed with, so the renewal's own `extend_for`
/// bounds what is left of the current lease. Retrying past the real end of the lease is
/// harmless, as the renewal statement refuses a lease that is no longer live.
pub(crate) async fn retry_while_lease_may_live<T, F, Fut>(
    lease_bound: Duration,
    mut attempt: F,
) -> Result<T, ProviderError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ProviderError>>,
{
    let deadline = Instant::now() + lease_bound;
    let mut pause = FIRST_PAUSE;
    loop {
        match attempt().await {
            Err(e) if e.is_retryable() && Instant::now() + pause < deadline => {
                tracing::debug!(target: "steadfast_pg", error = %e, "transient error during lease renewal; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn retries_transient_errors_then_returns_success() {
        let calls = AtomicU32::new(0);
        let out = retry_while_lease_may_live(Duration::from_secs(5), || async {
            if calls.fetch_add(1, Ordering::SeqCst) < 3 {
                Err(ProviderError::retryable("renew", "connection reset"))
            } else {
                Ok(7)
            }
        })
        .await;
        assert_eq!(out.unwrap(), 7);
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn permanent_error_is_returned_at_once() {
        let calls = AtomicU32::new(0);
        let out: Result<(), _> = retry_while_lease_may_live(Duration::from_secs(5), || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(ProviderError::permanent("renew", "lease gone"))
        })
        .await;
        assert!(!out.unwrap_err().is_retryable());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn gives_up_once_the_lease_must_have_ended() {
        let started = Instant::now();
        let out: Result<(), _> = retry_while_lease_may_live(Duration::from_millis(300), || async {
            Err(ProviderError::retryable("renew", "connection refused"))
        })
        .await;
        assert!(out.unwrap_err().is_retryable());
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
