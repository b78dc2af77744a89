//! Waiting for an orchestration to end, woken by the database instead of polling.
//!
//! duroxide's `Client::wait_for_orchestration` reads the status (the whole history and the
//! custom status, two statements on this provider) after 5, 10, 20, 40, 80 and then every
//! 100 ms; with many clients waiting that is most of the database's work (measured in
//! `bench/node`: ~24 of the 32 transactions of a one-activity orchestration). Here the
//! status is read, in one statement (`status.rs`), once (not even that right after this
//! process started the instance: `watched_starts.rs`), and again only when the
//! execution-end wake-up (`wake.rs`) names the instance, when the listen connection
//! reconnected, or after `RECHECK` at the latest. In session-free mode, with no listener,
//! only the ends committed by this process's providers wake a waiter (`local_wakes.rs`),
//! and it reads again every `claim.long_poll_recheck`: other processes' ends are found
//! as their work is.

use std::sync::Arc;
use std::time::{Duration, Instant};

use duroxide::{ClientError, OrchestrationStatus};
use tokio::sync::broadcast::{Receiver, error::RecvError};

use crate::provider::PostgresProvider;
use crate::watched_starts::end_key;

/// The longest a waiter that hears other processes' ends goes without reading the status:
/// a backstop, since the listener reports every reconnect (after which notifications may
/// have been lost).
const RECHECK: Duration = Duration::from_secs(1);

impl PostgresProvider {
    /// Wait until `instance` has completed or failed, as
    /// `duroxide::Client::wait_for_orchestration` does (same results, same
    /// `ClientError::Timeout`), but woken by the execution-end notification instead of
    /// polling, and reading the status in one statement
    /// ([`orchestration_status`](Self::orchestration_status)). Without LISTEN
    /// ([`PollingMode::SessionFree`](crate::PollingMode)) only this process's ends are
    /// heard, and the status is read again every `claim.long_poll_recheck`.
    pub async fn wait_for_orchestration(
        &self,
        instance: &str,
        timeout: Duration,
    ) -> Result<OrchestrationStatus, ClientError> {
        // Subscribed before the first read, so an end committed after that read is heard.
        let mut ended = self.ended_executions();
        let recheck = if self.hears_other_processes() {
            RECHECK
        } else {
            self.options.claim.long_poll_recheck
        };
        let deadline = Instant::now() + timeout;
        let key = end_key(instance);
        // Not ended before the subscription above if this process started it and has
        // heard no end of it since (`watched_starts.rs`): the first read is skipped.
        if self.wakes().watched_starts().take_unended(instance) {
            wait_for_end(&mut ended, &key, (Instant::now() + recheck).min(deadline)).await;
        }
        loop {
            let status = self.orchestration_status(instance).await?;
            if matches!(
                status,
                OrchestrationStatus::Completed { .. } | OrchestrationStatus::Failed { .. }
            ) {
                return Ok(status);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ClientError::Timeout);
            }
            wait_for_end(&mut ended, &key, (now + recheck).min(deadline)).await;
        }
    }
}

/// Until an end notification names `key` (or may have been lost), or `until`.
async fn wait_for_end(ended: &mut Receiver<Arc<str>>, key: &str, until: Instant) {
    let timer = tokio::time::sleep_until(until.into());
    tokio::pin!(timer);
    loop {
        tokio::select! {
            _ = &mut timer => return,
            got = ended.recv() => match got {
                Ok(id) if id.is_empty() || &*id == key => return,
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => return,
                Err(RecvError::Closed) => {
                    (&mut timer).await;
                    return;
                }
            },
        }
    }
}
