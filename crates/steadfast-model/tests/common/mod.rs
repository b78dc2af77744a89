//! Running the checker the way every test does, and printing what it explored.

#![allow(dead_code)] // each test file uses a part

use std::collections::BTreeSet;
use std::time::Instant;

use stateright::{Checker, HasDiscoveries, Model, Path};
use steadfast_model::liveness::StateGraph;
use steadfast_model::{Action, ClaimModel, ModelConfig, State, display};

/// Dispatcher 0 claims instance 0.
pub const CLAIM0: Action = Action::Claim {
    dispatcher: 0,
    instance: 0,
};

/// Dispatcher 0 claims instance 0, crashes, the lease runs out and dispatcher 0 (again
/// idle, as good as any) claims it again: the batch's next hand-out.
pub const REDELIVERED: [Action; 4] = [
    CLAIM0,
    Action::Crash { dispatcher: 0 },
    Action::ExpireLease { instance: 0 },
    CLAIM0,
];

/// Checks `cfg`'s properties over its whole state space (depth first, symmetry reduced,
/// two threads) and returns the names of those with a counterexample, each printed.
pub fn violated(label: &str, cfg: ModelConfig) -> BTreeSet<&'static str> {
    let started = Instant::now();
    let checker = ClaimModel::new(cfg)
        .checker()
        .threads(2)
        .symmetry()
        .spawn_dfs()
        .join();
    eprintln!(
        "{label}: {} states explored ({} generated, max depth {}) in {:.1?}",
        checker.unique_state_count(),
        checker.state_count(),
        checker.max_depth(),
        started.elapsed()
    );
    assert!(checker.is_done(), "{label}: the check did not finish");
    let found = checker.discoveries();
    for (name, path) in &found {
        eprintln!(
            "{label}: counterexample to \"{name}\" (depth first, not the shortest):\n{}",
            display::path(path)
        );
    }
    found.into_keys().collect()
}

/// Checks `cfg`'s properties over its whole state space and asserts that all hold.
pub fn assert_all_hold(label: &str, cfg: ModelConfig) {
    let broken = violated(label, cfg);
    assert!(broken.is_empty(), "{label}: violated: {broken:?}");
}

/// Searches breadth first for the shortest counterexample to `property` (the only one
/// checked) and returns it, printed.
pub fn shortest_counterexample(
    label: &str,
    cfg: ModelConfig,
    property: &'static str,
) -> Path<State, Action> {
    let started = Instant::now();
    let checker = ClaimModel::new(cfg.only(property))
        .checker()
        .threads(2)
        .finish_when(HasDiscoveries::AnyFailures)
        .spawn_bfs()
        .join();
    eprintln!(
        "{label}: {} states explored ({} generated) in {:.1?}",
        checker.unique_state_count(),
        checker.state_count(),
        started.elapsed()
    );
    let found = checker
        .discovery(property)
        .unwrap_or_else(|| panic!("{label}: no counterexample to \"{property}\""));
    eprintln!(
        "{label}: shortest counterexample to \"{property}\":\n{}",
        display::path(&found)
    );
    found
}

/// Runs `steps` from the initial state, each of which must be enabled, printing the
/// trace; returns the last state.
pub fn replay(label: &str, cfg: ModelConfig, steps: &[Action]) -> State {
    let model = ClaimModel::new(cfg);
    let initial = model.initial_state();
    let mut states = vec![initial.clone()];
    for (n, a) in steps.iter().enumerate() {
        let last = states.last().expect("the initial state");
        let next = model
            .step(last, *a)
            .unwrap_or_else(|| panic!("{label}: step {} ({a:?}) is not enabled in {last}", n + 1));
        states.push(next);
    }
    eprintln!(
        "{label}:\n{}",
        display::trace(&initial, steps.iter().zip(&states[1..]))
    );
    states.pop().expect("the initial state")
}

/// Explores the whole state graph (for the liveness checks), printing its size.
pub fn graph(label: &str, cfg: ModelConfig, representative: fn(&State) -> State) -> StateGraph {
    let started = Instant::now();
    let graph = StateGraph::explore(&ClaimModel::new(cfg), representative);
    eprintln!(
        "{label}: {} states explored, {} transitions, in {:.1?}",
        graph.states.len(),
        graph.transitions,
        started.elapsed()
    );
    graph
}

/// Whether some step of `path` is `action`.
pub fn has_step(path: &Path<State, Action>, action: impl Fn(&Action) -> bool) -> bool {
    path.clone().into_actions().iter().any(action)
}

/// The shortest counterexample to `property` with `max_attempts` 1 and 2.
pub fn shortest_for_each_budget(
    label: &str,
    cfg: impl Fn(u8) -> ModelConfig,
    property: &'static str,
) -> Vec<Path<State, Action>> {
    [1, 2]
        .into_iter()
        .map(|m| shortest_counterexample(&format!("{label}, M = {m}"), cfg(m), property))
        .collect()
}

/// Whether the last step of `path` is a claim.
pub fn ends_with_claim(path: &Path<State, Action>) -> bool {
    matches!(
        path.clone().into_actions().last(),
        Some(Action::Claim { .. })
    )
}

/// Whether `property` holds in `s`.
pub fn holds(cfg: &ModelConfig, property: &'static str, s: &State) -> bool {
    let model = ClaimModel::new(cfg.clone());
    (model.property(property).condition)(&model, s)
}

/// A known counterexample with both fixes off ([`ModelConfig::ci`]): the shortest runs
/// breaking `property` with `max_attempts` 1 and 2 (printed), and `steps`, which break it
/// with `max_attempts` 1. Returns the last state of `steps`.
pub fn assert_known_gap(label: &str, steps: &[Action], property: &'static str) -> State {
    shortest_for_each_budget(label, ModelConfig::ci, property);
    let cfg = ModelConfig::ci(1);
    let last = replay(label, cfg.clone(), steps);
    assert!(
        !holds(&cfg, property, &last),
        "{label}: not broken by the given steps"
    );
    last
}

/// With a fix in `cfg`: `steps` (a counterexample without it) no longer break
/// `property`, and nothing in the CI bound does. Returns the last state of `steps`.
pub fn assert_fixed(
    label: &str,
    cfg: ModelConfig,
    steps: &[Action],
    property: &'static str,
) -> State {
    let last = replay(label, cfg.clone(), steps);
    assert!(holds(&cfg, property, &last), "{label}: still broken");
    assert_all_hold(label, cfg.only(property));
    last
}
