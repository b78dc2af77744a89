//! Liveness. With a fault budget every run ends, and stateright's `eventually` judges
//! each; with faults unbounded the graph check of `steadfast_model::liveness` proves the
//! same under strong fairness. See docs/model.md for what each means and does not.

mod common;

use stateright::Representative;
use steadfast_model::liveness;
use steadfast_model::properties::QUEUE_DRAINS;
use steadfast_model::state::Execution;
use steadfast_model::{ModelConfig, State};

fn bounded(max_attempts: u8, faults: u8) -> ModelConfig {
    let mut cfg = ModelConfig::ci(max_attempts);
    cfg.faults = Some(faults);
    cfg
}

#[test]
fn with_bounded_faults_every_run_ends_drained() {
    for (m, faults) in [(1, 3), (2, 3)] {
        let label = format!("{faults} faults, M = {m}");
        // Every run ends (renewals aside), so `eventually` below judges every run.
        let graph = common::graph(&label, bounded(m, faults), State::representative);
        if let Some(trace) = graph.cycle() {
            panic!("{label}: a run that never ends:\n{trace}");
        }
        common::assert_all_hold(&label, bounded(m, faults).only(QUEUE_DRAINS));
    }
}

fn check(label: &str, result: Result<(), liveness::Trace>) {
    if let Err(trace) = result {
        panic!("{label}: from the last state the goal is unreachable:\n{trace}");
    }
}

#[test]
fn under_fairness_queues_drain_and_ready_instances_are_claimed() {
    for m in [1, 2] {
        let label = format!("faults unbounded, M = {m}");
        let graph = common::graph(
            &label,
            ModelConfig::ci(m),
            State::representative_keeping_ids,
        );
        check(&label, liveness::queue_drains(&graph));
        for i in 0..2 {
            check(&label, liveness::ready_instance_is_claimed(&graph, i));
        }
    }
}

/// The checks above can fail: without a fault budget runs can go on for ever, and a goal
/// that can be lost for good is reported.
#[test]
fn the_graph_checks_find_what_they_look_for() {
    let mut small = ModelConfig::ci(1);
    (small.dispatchers, small.instances, small.started) = (2, 1, 1);
    let graph = common::graph("small, faults unbounded", small, State::representative);
    let cycle = graph.cycle().expect("crash, expire, claim again: a cycle");
    eprintln!("a run that can go on for ever passes the last state of:\n{cycle}");
    let all_completed = |s: &State| {
        s.instances
            .iter()
            .all(|i| i.execution == Execution::Completed)
    };
    let lost = graph
        .leads_to(&|_| true, &all_completed)
        .expect_err("an instance that failed never completes");
    eprintln!("from the last state no run completes every instance:\n{lost}");
}
