//! Found by this model: the runtime checks `attempt_count > max_attempts` before it looks
//! at the history, so a late message of a completed instance that is redelivered until it
//! is poison gets a poison disposition, and with a live lease
//! `commit_poison_disposition` writes it without looking at the execution's status:
//! `OrchestrationFailed` after `OrchestrationCompleted`, status Completed → Failed. The
//! generation fence does not help; a poison commit that spares terminal executions does.

mod common;

use steadfast_model::properties::ONE_TERMINAL_EVENT;
use steadfast_model::state::Execution;
use steadfast_model::{Action, ModelConfig};

/// M = 1: the instance completes, an event arrives, its first delivery is lost to a
/// crash, its second (attempt 2 > M) is poison.
fn late_event() -> Vec<Action> {
    let before = [
        common::CLAIM0,
        Action::AckTurn {
            dispatcher: 0,
            complete: true,
        },
        Action::EnqueueEvent { instance: 0 },
    ];
    let poison = [Action::AckPoison { dispatcher: 0 }];
    [&before[..], &common::REDELIVERED, &poison].concat()
}

#[test]
fn a_live_lease_poison_fails_a_completed_execution() {
    let last = common::assert_known_gap("no fence", &late_event(), ONE_TERMINAL_EVENT);
    let fenced = |m| ModelConfig::ci(m).with_generation_fence();
    common::shortest_for_each_budget("generation fence only", fenced, ONE_TERMINAL_EVENT);
    assert_eq!(last.instance(0).execution, Execution::Failed);
}

#[test]
fn a_poison_commit_sparing_terminal_executions_refuses_it() {
    let cfg = ModelConfig::ci(1).with_terminal_spared();
    let last = common::assert_fixed("terminal spared", cfg, &late_event(), ONE_TERMINAL_EVENT);
    assert_eq!(last.instance(0).execution, Execution::Completed);
    // The poison message is still dead-lettered.
    assert!(last.instance(0).messages.is_empty());
    assert_eq!(last.dead_letters.len(), 1);
}
