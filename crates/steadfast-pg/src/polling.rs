//! Long polling shared by both queues: claim; if nothing was ready, wait for an enqueue
//! notification, the next known visibility time or the recheck interval (never past the
//! caller's `poll_timeout`), and claim again. In session-free mode there is no waiting.

use std::future::Future;
use std::time::{Duration, Instant};

use duroxide::providers::ProviderError;
use tokio::sync::watch;

use crate::provider::PostgresProvider;
use crate::run::RunScalar;

pub(crate) enum ClaimOutcome<T> {
    Claimed(T),
    /// Nothing eligible right now.
    Empty,
    /// Candidates existed but the bounded tries or time ran out: return at once.
    Exhausted,
}

impl PostgresProvider {
    /// `next_visible_sql` returns the milliseconds until the queue's next delayed message
    /// becomes visible (NULL if none).
    pub(crate) async fn poll<T, F, Fut>(
        &self,
        operation: &str,
        poll_timeout: Duration,
        next_visible_sql: &str,
        mut claim: F,
    ) -> Result<Option<T>, ProviderError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<ClaimOutcome<T>, ProviderError>>,
    {
        let mut wake = self.wake_receiver();
        let deadline = Instant::now()
            + if wake.is_some() {
                poll_timeout
            } else {
                Duration::ZERO
            };
        loop {
            match claim().await? {
                ClaimOutcome::Claimed(item) => return Ok(Some(item)),
                ClaimOutcome::Exhausted => return Ok(None),
                ClaimOutcome::Empty => {}
            }
            let Some(rx) = wake.as_mut() else {
                return Ok(None);
            };
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let next_visible_ms: Option<f64> = self
                .scalar(next_visible_sql)
                .fetch_one_on(self, operation)
                .await?;
            let mut wait = (deadline - now).min(self.options.claim.long_poll_recheck);
            if let Some(ms) = next_visible_ms {
                wait = wait.min(Duration::from_secs_f64((ms.max(0.0) + 1.0) / 1000.0));
            }
            wait_or_wake(rx, wait).await;
        }
    }
}

async fn wait_or_wake(rx: &mut watch::Receiver<u64>, wait: Duration) {
    tokio::select! {
        _ = tokio::time::sleep(wait) => {}
        _ = rx.changed() => {}
    }
}
