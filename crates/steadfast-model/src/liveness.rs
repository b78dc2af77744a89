//! Liveness on the explicit (finite) state graph.
//!
//! stateright's `eventually` only judges runs that end (states with no step left): on a
//! graph with cycles (crash, expire, claim again, ...) it proves nothing. So this module
//! builds the reachable graph (reduced by [`crate::symmetry`]) and offers two checks:
//!
//! * [`StateGraph::leads_to`], for the model with faults unbounded:
//!
//!   > from every reachable state where `trigger` holds, every state reachable from it
//!   > without passing through `goal` can still reach `goal`.
//!
//!   On a finite graph that is exactly "every *strongly fair* run that passes a `trigger`
//!   state later reaches a `goal` state", strong fairness meaning: a state visited
//!   infinitely often takes each of its steps infinitely often. (The states such a run
//!   visits infinitely often are closed under steps, so one of them is a goal state.) It
//!   says nothing about runs that are not fair in that sense, for example a dispatcher
//!   that crashes after every claim forever: faults are steps like any other, and
//!   fairness makes every step, good or bad, happen again.
//! * [`StateGraph::cycle`], for the model with a fault budget: whether any run is
//!   infinite. Without one (renewals aside, which change nothing), every run ends, and
//!   stateright's `eventually` then judges every run.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};

use stateright::Model;
#[cfg(doc)]
use stateright::Representative;

use crate::action::Action;
use crate::model::ClaimModel;
use crate::state::State;

/// The reachable state graph, up to symmetry: one node per class of equivalent states.
pub struct StateGraph {
    pub states: Vec<State>,
    successors: Vec<Vec<(u32, Action)>>,
    /// How each state was first reached (none for the initial state).
    parent: Vec<Option<(u32, Action)>>,
    pub transitions: usize,
}

/// How a bad state is reached: from the initial state, each step and the state it leads
/// to (a real run; the bad state stands for its class).
#[derive(Debug)]
pub struct Trace {
    pub initial: State,
    pub steps: Vec<(Action, State)>,
}

fn fingerprint(s: &State) -> u64 {
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

impl StateGraph {
    /// Explores every state reachable in `model`, states with the same
    /// `representative(state)` taken as one: [`Representative::representative`] for
    /// checks symmetric in the instance ids, [`State::representative_keeping_ids`] for
    /// checks that follow one id. Each node keeps the state it was first reached as, so
    /// traces are real runs. Told apart by a 64-bit fingerprint, as stateright does.
    pub fn explore(model: &ClaimModel, representative: fn(&State) -> State) -> Self {
        let mut graph = StateGraph {
            states: Vec::new(),
            successors: Vec::new(),
            parent: Vec::new(),
            transitions: 0,
        };
        let mut index: HashMap<u64, u32> = HashMap::new();
        let mut add = |graph: &mut StateGraph, s: State, parent: Option<(u32, Action)>| {
            let fp = fingerprint(&representative(&s));
            if let Some(id) = index.get(&fp) {
                return (*id, false);
            }
            let id = graph.states.len() as u32;
            index.insert(fp, id);
            graph.states.push(s);
            graph.successors.push(Vec::new());
            graph.parent.push(parent);
            (id, true)
        };
        let mut pending = VecDeque::new();
        for s in model.init_states() {
            let (id, new) = add(&mut graph, s, None);
            if new {
                pending.push_back(id);
            }
        }
        let mut actions = Vec::new();
        while let Some(at) = pending.pop_front() {
            let state = graph.states[at as usize].clone();
            model.actions(&state, &mut actions);
            let mut edges = Vec::with_capacity(actions.len());
            for action in actions.drain(..) {
                let Some(next) = model.next_state(&state, action) else {
                    continue;
                };
                let (id, new) = add(&mut graph, next, Some((at, action)));
                if new {
                    pending.push_back(id);
                }
                edges.push((id, action));
            }
            graph.transitions += edges.len();
            graph.successors[at as usize] = edges;
        }
        graph
    }

    /// For each state, whether some path from it reaches a `goal` state.
    fn can_reach(&self, goal: &dyn Fn(&State) -> bool) -> Vec<bool> {
        let mut predecessors: Vec<Vec<u32>> = vec![Vec::new(); self.states.len()];
        for (from, edges) in self.successors.iter().enumerate() {
            for (to, _) in edges {
                predecessors[*to as usize].push(from as u32);
            }
        }
        let mut reach: Vec<bool> = self.states.iter().map(goal).collect();
        let mut pending: VecDeque<u32> = (0..self.states.len() as u32)
            .filter(|id| reach[*id as usize])
            .collect();
        while let Some(at) = pending.pop_front() {
            for p in &predecessors[at as usize] {
                if !reach[*p as usize] {
                    reach[*p as usize] = true;
                    pending.push_back(*p);
                }
            }
        }
        reach
    }

    fn trace_to(&self, mut id: u32) -> Trace {
        let mut steps = Vec::new();
        while let Some((from, action)) = self.parent[id as usize] {
            steps.push((action, self.states[id as usize].clone()));
            id = from;
        }
        steps.reverse();
        Trace {
            initial: self.states[id as usize].clone(),
            steps,
        }
    }

    /// `trigger` leads to `goal` under strong fairness (see the module documentation).
    /// On failure: a state reached from a `trigger` state, from which no `goal` state
    /// can be reached.
    pub fn leads_to(
        &self,
        trigger: &dyn Fn(&State) -> bool,
        goal: &dyn Fn(&State) -> bool,
    ) -> Result<(), Trace> {
        let reach = self.can_reach(goal);
        let mut seen = vec![false; self.states.len()];
        let mut pending = VecDeque::new();
        for (id, s) in self.states.iter().enumerate() {
            if trigger(s) && !goal(s) {
                seen[id] = true;
                pending.push_back(id as u32);
            }
        }
        while let Some(at) = pending.pop_front() {
            if !reach[at as usize] {
                return Err(self.trace_to(at));
            }
            for (next, _) in &self.successors[at as usize] {
                let n = *next as usize;
                if !seen[n] && !goal(&self.states[n]) {
                    seen[n] = true;
                    pending.push_back(*next);
                }
            }
        }
        Ok(())
    }

    /// A run that can go on for ever: a state on a cycle of the graph (and how it is
    /// reached), where a step that leaves the state as it was is no cycle if it is a
    /// renewal (the only step that can do nothing). `None`: every run ends.
    pub fn cycle(&self) -> Option<Trace> {
        let counts = |(to, action): &&(u32, Action), from: usize| {
            *to as usize != from || !matches!(action, Action::RenewLease { .. })
        };
        let mut incoming = vec![0usize; self.states.len()];
        for (from, edges) in self.successors.iter().enumerate() {
            for (to, _) in edges.iter().filter(|e| counts(e, from)) {
                incoming[*to as usize] += 1;
            }
        }
        // Peel off states no remaining step enters; what is left lies on or after a cycle.
        let mut pending: Vec<usize> = (0..self.states.len())
            .filter(|s| incoming[*s] == 0)
            .collect();
        let mut removed = 0;
        while let Some(at) = pending.pop() {
            removed += 1;
            for (to, _) in self.successors[at].iter().filter(|e| counts(e, at)) {
                incoming[*to as usize] -= 1;
                if incoming[*to as usize] == 0 {
                    pending.push(*to as usize);
                }
            }
        }
        if removed == self.states.len() {
            return None;
        }
        // Every state left has a predecessor left: walking back from one must repeat.
        let mut predecessor = vec![None; self.states.len()];
        for (from, edges) in self.successors.iter().enumerate() {
            for (to, _) in edges.iter().filter(|e| counts(e, from)) {
                if incoming[from] > 0 {
                    predecessor[*to as usize] = Some(from);
                }
            }
        }
        let mut at = (0..self.states.len()).find(|s| incoming[*s] > 0)?;
        let mut visited = vec![false; self.states.len()];
        while !visited[at] {
            visited[at] = true;
            at = predecessor[at]?;
        }
        Some(self.trace_to(at as u32))
    }
}

/// Every message is eventually acked or dead-lettered: the queue always empties again.
pub fn queue_drains(graph: &StateGraph) -> Result<(), Trace> {
    graph.leads_to(&|_| true, &State::queue_is_empty)
}

/// A ready instance is eventually claimed: once `instance` is a claim candidate, a claim
/// of it stamps its lease (or its messages are gone), whatever the other instances'
/// messages do. Needs a graph explored with [`State::representative_keeping_ids`].
pub fn ready_instance_is_claimed(graph: &StateGraph, instance: u8) -> Result<(), Trace> {
    graph.leads_to(&|s| s.instance(instance).claimable(), &|s| {
        let inst = s.instance(instance);
        inst.lease_is_live() || inst.messages.is_empty()
    })
}
