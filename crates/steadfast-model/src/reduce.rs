//! Reductions applied after every step: each forgets something no later step can observe,
//! so that states with the same future are the same state. None changes what the
//! database can do next.

use crate::config::ModelConfig;
use crate::state::{Dispatcher, State};

impl State {
    /// * A dispatcher holding an ordinary claim (attempt `<= M`) whose token is no longer
    ///   its instance's lease token can only be refused from here on (its ack, renewal,
    ///   abandon and give-back all check the token against the lease row first, and a
    ///   token never comes back): it is idle at once. So is a settling one (old protocol:
    ///   its ceiling transaction would find the lease taken over). A poison claim is kept:
    ///   its disposition can commit without the lease.
    /// * A message's `lock_token` that is not its instance's lease token is cleared: every
    ///   claim re-tags every visible message, and all that reads a message's token (ack,
    ///   give-back, abandon, the ceiling) first matches the token with the lease row. (The
    ///   orphan sweep reads `lock_token IS NULL`, but only of instances that are not
    ///   runnable, whose messages carry no token: parking clears it, a deletion removes
    ///   them.)
    /// * Without the generation fence nothing reads the lease row's recorded attempt.
    /// * Committed ghost ids no held claim refers to are forgotten.
    pub fn normalize(&mut self, cfg: &ModelConfig) {
        for d in &mut self.dispatchers {
            let dead = match d {
                Dispatcher::Idle => false,
                Dispatcher::Holding(c) => {
                    c.attempts <= cfg.max_attempts
                        && !self.instances[c.instance as usize].leased_to(c.token)
                }
                Dispatcher::Settling(c) => !self.instances[c.instance as usize].leased_to(c.token),
            };
            if dead {
                *d = Dispatcher::Idle;
            }
        }
        for inst in &mut self.instances {
            let lease = inst.lease().map(|l| l.token);
            for m in &mut inst.messages {
                if m.token.is_some() && m.token != lease {
                    m.token = None;
                }
            }
            if !cfg.generation_fence
                && let Some(row) = &mut inst.row
                && let Some(l) = &mut row.lease
            {
                l.attempts = 0;
            }
        }
        self.prune_ghost();
    }
}
