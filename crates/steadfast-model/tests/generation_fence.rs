//! Known gap (issue 9 item 3): a poison disposition carries no incarnation, so one that
//! outlived its lease commits into a new incarnation of the same id. The checker finds
//! it in the code before generations (fence off), and the fence (in the code now) refuses it.

mod common;

use steadfast_model::properties::CURRENT_GENERATION;
use steadfast_model::state::Execution;
use steadfast_model::{Action, ModelConfig};

/// D0's claim reaches attempt 2 > M = 1 (the runtime decides poison), the admin deletes
/// the instance and the client starts the same id again; D1 runs the new incarnation's
/// first turn; then D0's poison disposition arrives.
fn recreated() -> Vec<Action> {
    let after = [
        Action::DeleteInstance { instance: 0 },
        Action::StartInstance { instance: 0 },
        Action::Claim {
            dispatcher: 1,
            instance: 0,
        },
        Action::AckTurn {
            dispatcher: 1,
            complete: false,
        },
        Action::AckPoison { dispatcher: 0 },
    ];
    [&common::REDELIVERED[..], &after].concat()
}

#[test]
fn without_the_fence_a_stale_poison_commits_into_a_new_incarnation() {
    let last = common::assert_known_gap("no fence", &recreated(), CURRENT_GENERATION);
    // The new incarnation's running execution failed with the old one's poison.
    assert_eq!(last.instance(0).execution, Execution::Failed);
}

#[test]
fn the_generation_fence_refuses_the_stale_poison() {
    let cfg = ModelConfig::ci(1).with_generation_fence();
    let last = common::assert_fixed("generation fence", cfg, &recreated(), CURRENT_GENERATION);
    assert_eq!(last.instance(0).execution, Execution::Running);
}
