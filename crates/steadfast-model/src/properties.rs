//! The checked properties. The safety ones are `always` over every reachable state; the
//! ghost flags they read are set by the step that breaks them (see [`crate::state::Ghost`]).
//! The liveness checks that need fairness are in [`crate::liveness`].

use stateright::Property;

use crate::config::ModelConfig;
use crate::model::ClaimModel;
use crate::state::State;

/// `attempt_count <= M + 1` for every queued message (a dead letter keeps the count its
/// message left the queue with, so it is covered too).
pub const ATTEMPTS_WITHIN_CEILING: &str = "attempt_count <= max_attempts + 1";
/// No two committed turns (acks or poison dispositions) share a claimed message.
pub const NO_DOUBLE_COMMIT: &str = "no claimed batch commits twice";
/// Every committed turn or poison disposition belongs to the incarnation it claimed.
pub const CURRENT_GENERATION: &str = "commits belong to the current incarnation";
/// No terminal event (and no status) is written into an execution already terminal.
pub const ONE_TERMINAL_EVENT: &str = "at most one terminal event per execution";
/// `attempt_count <= M + 2`: weaker than [`ATTEMPTS_WITHIN_CEILING`]; the old protocol
/// breaks it too, by climbing on after a settle that never ran.
pub const NO_CLIMB: &str = "attempt_count never climbs past max_attempts + 2";
/// `eventually` (bounded faults only): every run ends with the queue empty and nothing
/// left that could refill it.
pub const QUEUE_DRAINS: &str = "every message is eventually acked or dead-lettered";

fn attempts_within_ceiling(m: &ClaimModel, s: &State) -> bool {
    let ceiling = m.config.ceiling_count();
    s.messages().all(|msg| msg.attempts <= ceiling)
}

fn no_double_commit(_: &ClaimModel, s: &State) -> bool {
    !s.ghost.double_commit
}

fn current_generation(_: &ClaimModel, s: &State) -> bool {
    !s.ghost.stale_commit
}

fn one_terminal_event(_: &ClaimModel, s: &State) -> bool {
    !s.ghost.second_terminal
}

fn no_climb(m: &ClaimModel, s: &State) -> bool {
    let bound = m.config.ceiling_count() + 1;
    s.messages().all(|msg| msg.attempts <= bound)
}

/// Stable once true (nothing can add a message any more), so stateright's per-path
/// discharge of an `eventually` bit cannot hide a later refill.
pub fn drained(_: &ClaimModel, s: &State) -> bool {
    s.queue_is_empty() && !s.can_add_messages()
}

/// Every property, `eventually` only with a fault budget (without one the state graph
/// has cycles, on which stateright does not check `eventually`).
pub fn all(cfg: &ModelConfig) -> Vec<Property<ClaimModel>> {
    let mut props = vec![
        Property::always(ATTEMPTS_WITHIN_CEILING, attempts_within_ceiling),
        Property::always(NO_DOUBLE_COMMIT, no_double_commit),
        Property::always(CURRENT_GENERATION, current_generation),
        Property::always(ONE_TERMINAL_EVENT, one_terminal_event),
        Property::always(NO_CLIMB, no_climb),
    ];
    if cfg.faults.is_some() {
        props.push(Property::eventually(QUEUE_DRAINS, drained));
    }
    props
}

/// The properties `cfg.only` names (all when it names none).
pub fn selected(cfg: &ModelConfig) -> Vec<Property<ClaimModel>> {
    let mut props = all(cfg);
    if !cfg.only.is_empty() {
        props.retain(|p| cfg.only.contains(&p.name));
    }
    props
}
