//! When each orchestrator lease this process holds has certainly ended, by the local clock.
//!
//! duroxide retries a failed turn ack a few times within about 0.3 s and then commits the
//! turn as *failed* (an infrastructure error) with the same token. A database that is
//! read-only for a moment (a failover), out of disk or unreachable would so fail a healthy
//! instance whenever it came back between the two. An ordinary ack therefore rides out
//! retryable errors for as long as its lease may still live (`transient.rs`); once the
//! lease has certainly ended, the failure commit that follows is refused like any ack of a
//! dead lease, and the instance is redelivered instead. The bound is an upper one: the
//! database stamped each lease before this process saw the reply.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Entries past their end are pruned once the book holds this many.
const PRUNE_AT: usize = 4096;

#[derive(Default)]
pub(crate) struct LeaseBook {
    ends: Mutex<HashMap<String, Instant>>,
}

impl LeaseBook {
    /// `token`'s lease was stamped or renewed for `length`, at the latest now.
    pub fn stamped(&self, token: &str, length: Duration) {
        let now = Instant::now();
        let mut ends = self.ends.lock().unwrap_or_else(|p| p.into_inner());
        if ends.len() >= PRUNE_AT {
            ends.retain(|_, end| *end > now);
        }
        ends.insert(token.to_string(), now + length);
    }

    /// How long `token`'s lease may still live (zero when unknown or over); forgets it.
    pub fn take_remaining(&self, token: &str) -> Duration {
        let end = self
            .ends
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
        end.map_or(Duration::ZERO, |end| {
            end.saturating_duration_since(Instant::now())
        })
    }

    pub fn forget(&self, token: &str) {
        self.ends
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_is_bounded_by_the_last_stamp_and_taken_once() {
        let book = LeaseBook::default();
        assert_eq!(book.take_remaining("unknown"), Duration::ZERO);
        book.stamped("t", Duration::from_secs(5));
        book.stamped("t", Duration::from_secs(10));
        let left = book.take_remaining("t");
        assert!(left > Duration::from_secs(9) && left <= Duration::from_secs(10));
        assert_eq!(book.take_remaining("t"), Duration::ZERO);
    }
}
