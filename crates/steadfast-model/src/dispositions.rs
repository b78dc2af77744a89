//! What a dispatcher holding a claim does next: ack, poison ack, renew, abandon, give
//! back, crash. Each ends the dispatcher's hold on the claim except a successful renewal.

use crate::config::ModelConfig;
use crate::state::{Claim, Dispatcher, Execution, State};

/// Takes the dispatcher's claim and leaves it idle.
fn release_dispatcher(s: &mut State, dispatcher: usize) -> Option<Claim> {
    let claim = s.dispatchers[dispatcher].claim().copied();
    s.dispatchers[dispatcher] = Dispatcher::Idle;
    claim
}

/// `ack_turn` (migration 0003).
pub fn ack_turn(s: &mut State, dispatcher: usize, complete: bool) {
    let Some(claim) = release_dispatcher(s, dispatcher) else {
        return;
    };
    let i = claim.instance;
    let live = s
        .instance(i)
        .lease()
        .is_some_and(|l| l.token == claim.token && l.live);
    if !live {
        return; // 'expired' or 'unknown': nothing written
    }
    s.record_commit(&claim);
    s.instance_mut(i)
        .messages
        .retain(|m| m.token != Some(claim.token));
    if complete {
        s.write_terminal(i, Execution::Completed);
    } else if !claim.seen.is_terminal() {
        s.write_running(i);
    }
    s.instance_mut(i).release_lease();
}

/// `ack_poison` (`src/orchestration.rs`) and the two commits it chooses between
/// (`src/poison.rs`).
pub fn ack_poison(cfg: &ModelConfig, s: &mut State, dispatcher: usize) {
    let Some(claim) = release_dispatcher(s, dispatcher) else {
        return;
    };
    let i = claim.instance;
    let inst = s.instance(i);
    let live = inst
        .lease()
        .is_some_and(|l| l.token == claim.token && l.live);
    if live {
        // commit_poison_disposition with the token's live lease: no status check.
        let spare = cfg.poison_spares_terminal && inst.execution.is_terminal();
        commit_poison(s, &claim, !spare);
        return;
    }
    // commit_poison_without_lease, keyed on (instance from the token, execution).
    let Some(row) = inst.row else {
        return; // "instance was deleted"
    };
    if cfg.generation_fence {
        let attempts = row.lease.map_or(0, |l| l.attempts);
        if inst.generation != claim.generation || attempts != claim.attempts {
            return;
        }
    }
    if inst.execution.is_terminal() {
        return; // "execution is already terminal"
    }
    commit_poison(s, &claim, true);
}

/// `commit_poison_disposition`: dead letters, the disposition's turn, the lease released.
fn commit_poison(s: &mut State, claim: &Claim, write_failed: bool) {
    let i = claim.instance;
    s.record_commit(claim);
    s.dead_letter_handed_out(i);
    if write_failed {
        s.write_terminal(i, Execution::Failed);
    }
    s.instance_mut(i).release_lease();
}

/// `queries/orch_lease_renew.sql`: a no-op on a live lease holding the token; otherwise
/// the runtime gives the turn up.
pub fn renew(s: &mut State, dispatcher: usize) {
    let Some(claim) = s.dispatchers[dispatcher].claim().copied() else {
        return;
    };
    let live = s
        .instance(claim.instance)
        .lease()
        .is_some_and(|l| l.token == claim.token && l.live);
    if !live {
        s.dispatchers[dispatcher] = Dispatcher::Idle;
    }
}

/// `abandon_orchestration` (keeps the attempt) or `give_back_claim` (returns it): both
/// act only while the token is still the lease's, whatever its liveness.
pub fn abandon(s: &mut State, dispatcher: usize, give_back: bool) {
    let Some(claim) = release_dispatcher(s, dispatcher) else {
        return;
    };
    s.spend_fault();
    let inst = s.instance_mut(claim.instance);
    if !inst.leased_to(claim.token) {
        return;
    }
    if give_back {
        for m in &mut inst.messages {
            if m.token == Some(claim.token) {
                m.token = None;
                m.attempts = m.attempts.saturating_sub(1);
            }
        }
    }
    inst.release_lease();
}

/// The dispatcher forgets its claim.
pub fn crash(s: &mut State, dispatcher: usize) {
    release_dispatcher(s, dispatcher);
    s.spend_fault();
}
