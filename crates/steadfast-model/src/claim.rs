//! The claim statement and the attempt ceiling, old and new.

use crate::config::{CeilingProtocol, ModelConfig};
use crate::state::{Claim, Dispatcher, Execution, Kind, Lease, State};

/// `functions/claim_orchestration.sql`, one successful try (see [`crate::Action::Claim`]).
pub fn claim(cfg: &ModelConfig, s: &mut State, dispatcher: usize, i: u8) {
    let token = s.fresh_token();
    let inst = s.instance_mut(i);
    if inst.execution == Execution::NoRow && !inst.messages.iter().any(|m| m.kind == Kind::Start) {
        // Runnable, never started, nothing here starts it: parked until a start is
        // queued (`first_queued_start`: none, every queued message is in this batch).
        for m in &mut inst.messages {
            m.token = None;
            m.waiting = true;
        }
        if let Some(row) = &mut inst.row {
            row.runnable = false;
        }
        return;
    }
    let mut batch = 0;
    for m in &mut inst.messages {
        m.token = Some(token);
        m.attempts += 1;
        m.waiting = false;
        batch |= 1 << m.id;
    }
    let attempts = inst.max_attempts();
    if let Some(row) = &mut inst.row {
        row.lease = Some(Lease {
            token,
            live: true,
            attempts,
        });
    }
    let claim = Claim {
        instance: i,
        token,
        generation: inst.generation,
        attempts,
        batch,
        seen: inst.execution,
    };
    s.dispatchers[dispatcher] = match cfg.ceiling {
        CeilingProtocol::AfterClaim if attempts > cfg.ceiling_count() => {
            Dispatcher::Settling(claim)
        }
        _ => Dispatcher::Holding(claim),
    };
}

/// `functions/fail_stopped_instance.sql` inside the claim (new protocol).
pub fn fail_at_ceiling(s: &mut State, i: u8) {
    let has_start = s.instance(i).messages.iter().any(|m| m.kind == Kind::Start);
    s.dead_letter_handed_out(i);
    s.fail_unless_terminal(i, has_start);
    s.instance_mut(i).release_lease();
}

/// `enforce_orchestration_ceiling` in `src/poison.rs`, the old protocol's separate
/// transaction after the claim.
pub fn enforce_after_claim(s: &mut State, dispatcher: usize) {
    let Dispatcher::Settling(claim) = s.dispatchers[dispatcher] else {
        return;
    };
    s.dispatchers[dispatcher] = Dispatcher::Idle;
    let i = claim.instance;
    if !s.instance(i).leased_to(claim.token) {
        // `hold_claim`: "a just-claimed lease was taken over"; a retryable error.
        return;
    }
    let mut has_start = false;
    for m in &mut s.instance_mut(i).messages {
        if m.token == Some(claim.token) {
            m.attempts = m.attempts.saturating_sub(1);
            has_start |= m.kind == Kind::Start;
        }
    }
    s.dead_letter_handed_out(i);
    s.fail_unless_terminal(i, has_start);
    s.instance_mut(i).release_lease();
}
