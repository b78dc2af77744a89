//! Which instances this process holds on a retried claim: a turn an earlier claim did not
//! settle (the process that ran it hung, crashed or lost its lease).
//!
//! Orchestration code that never yields (an endless loop in a generator) stalls the event
//! loop of the process that runs it; the event-loop watch then gives that process's work up,
//! and the next process to claim the instance would stall the same way, until every process
//! of the fleet hangs. So the JS driver runs the steps of a retried turn under a deadline
//! (`vm` timeouts, 65-90 µs a step, which first attempts do not pay): such an instance
//! hangs at most the one process that ran its first attempt.

use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
pub(crate) struct RetriedTurns {
    /// Instance id -> attempt of its current claim, for claims past the first attempt.
    attempts: Mutex<HashMap<String, u32>>,
}

impl RetriedTurns {
    /// An orchestration claim of `instance` was handed out at `attempt` (1 for the first).
    pub fn claimed(&self, instance: &str, attempt: u32) {
        let mut attempts = self.attempts.lock().unwrap_or_else(|p| p.into_inner());
        if attempt > 1 {
            attempts.insert(instance.to_owned(), attempt);
        } else {
            attempts.remove(instance);
        }
    }

    /// The attempt of `instance`'s current claim if it is a retry; forgets it, so only the
    /// turn this claim runs is guarded.
    pub fn take(&self, instance: &str) -> Option<u32> {
        self.attempts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(instance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retried_claim_is_taken_once_and_a_first_attempt_clears_it() {
        let turns = RetriedTurns::default();
        turns.claimed("a", 1);
        assert_eq!(turns.take("a"), None);
        turns.claimed("a", 3);
        assert_eq!(turns.take("a"), Some(3));
        assert_eq!(turns.take("a"), None);
        turns.claimed("a", 2);
        turns.claimed("a", 1);
        assert_eq!(turns.take("a"), None);
    }
}
