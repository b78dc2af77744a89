//! A password that changes while providers use it: an access token that expires
//! (Microsoft Entra ID, AWS IAM authentication), handed in by whatever refreshes it.
//!
//! Every provider built with a [`PasswordFeed`] connects with its current value and, when
//! it changes, sets the new one on its pools, for the connections they open from then on.
//! Open connections are kept: the server checks a password only when a connection starts.

use std::sync::Arc;

use sqlx::PgPool;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The sending half: [`RotatingPassword::set`] reaches every provider built with one of
/// its [`feeds`](RotatingPassword::feed), including those connected later. Dropping
/// every clone leaves the providers on the last password.
#[derive(Clone)]
pub struct RotatingPassword {
    sender: Arc<watch::Sender<String>>,
}

impl RotatingPassword {
    pub fn new(initial: impl Into<String>) -> Self {
        Self {
            sender: Arc::new(watch::Sender::new(initial.into())),
        }
    }

    /// The password for every connection opened from now on.
    pub fn set(&self, password: impl Into<String>) {
        self.sender.send_replace(password.into());
    }

    /// What [`ProviderOptions::password`](crate::ProviderOptions::password) takes.
    pub fn feed(&self) -> PasswordFeed {
        PasswordFeed(self.sender.subscribe())
    }
}

impl std::fmt::Debug for RotatingPassword {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RotatingPassword(<redacted>)")
    }
}

/// The receiving half of a [`RotatingPassword`]. Two feeds are equal when they follow the
/// same password.
#[derive(Clone)]
pub struct PasswordFeed(watch::Receiver<String>);

impl PartialEq for PasswordFeed {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_channel(&other.0)
    }
}

impl std::fmt::Debug for PasswordFeed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PasswordFeed(<redacted>)")
    }
}

impl PasswordFeed {
    pub(crate) fn current(&self) -> String {
        self.0.borrow().clone()
    }
}

/// The task that sets each new password on a provider's pools; stopped when dropped.
pub(crate) struct PasswordFollower(JoinHandle<()>);

impl PasswordFollower {
    pub(crate) fn start(feed: &PasswordFeed, pools: Vec<PgPool>) -> Self {
        // A change since the feed was made shows as changed at once: at worst the
        // password the pools already have is set again.
        let mut feed = feed.0.clone();
        Self(tokio::spawn(async move {
            while feed.changed().await.is_ok() {
                let password = feed.borrow_and_update().clone();
                for pool in &pools {
                    let options = pool.connect_options().as_ref().clone();
                    pool.set_connect_options(options.password(&password));
                }
            }
        }))
    }

    pub(crate) fn stop(&self) {
        self.0.abort();
    }
}

impl Drop for PasswordFollower {
    fn drop(&mut self) {
        self.0.abort();
    }
}
