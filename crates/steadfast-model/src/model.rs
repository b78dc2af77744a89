//! The stateright [`Model`]: initial state, enabled steps and their effects.

use stateright::{Model, Property};

use crate::action::Action;
use crate::config::ModelConfig;
use crate::state::{Budgets, Dispatcher, Execution, Ghost, Instance, Kind, State};
use crate::{claim, dispositions, enabled, environment, properties};

/// The claim protocol under one [`ModelConfig`].
#[derive(Clone, Debug)]
pub struct ClaimModel {
    pub config: ModelConfig,
}

impl ClaimModel {
    pub fn new(config: ModelConfig) -> Self {
        Self { config }
    }

    /// The initial state: `started` ids with a queued start, the others without rows.
    pub fn initial_state(&self) -> State {
        let cfg = &self.config;
        let mut s = State {
            instances: vec![
                Instance {
                    generation: 0,
                    row: None,
                    execution: Execution::NoRow,
                    messages: Vec::new(),
                };
                cfg.instances
            ],
            dispatchers: vec![Dispatcher::Idle; cfg.dispatchers],
            dead_letters: Vec::new(),
            budgets: Budgets {
                events: cfg.events,
                starts: cfg.starts,
                deletes: cfg.deletes,
                requeues: cfg.requeues,
                faults: cfg.faults,
            },
            ghost: Ghost::default(),
        };
        for i in 0..cfg.started.min(cfg.instances) {
            s.enqueue(i as u8, Kind::Start);
        }
        s
    }

    /// `a`'s effect on `s`, if `a` is enabled there.
    pub fn step(&self, s: &State, a: Action) -> Option<State> {
        let cfg = &self.config;
        if !enabled::is_enabled(cfg, s, &a) {
            return None;
        }
        let mut next = s.clone();
        let n = &mut next;
        match a {
            Action::Claim {
                dispatcher,
                instance,
            } => claim::claim(cfg, n, dispatcher, instance),
            Action::FailAtCeiling { instance } => claim::fail_at_ceiling(n, instance),
            Action::EnforceCeilingAfterClaim { dispatcher } => {
                claim::enforce_after_claim(n, dispatcher)
            }
            Action::AckTurn {
                dispatcher,
                complete,
            } => dispositions::ack_turn(n, dispatcher, complete),
            Action::AckPoison { dispatcher } => dispositions::ack_poison(cfg, n, dispatcher),
            Action::RenewLease { dispatcher } => dispositions::renew(n, dispatcher),
            Action::Abandon { dispatcher } => dispositions::abandon(n, dispatcher, false),
            Action::GiveBack { dispatcher } => dispositions::abandon(n, dispatcher, true),
            Action::Crash { dispatcher } => dispositions::crash(n, dispatcher),
            Action::ExpireLease { instance } => environment::expire_lease(n, instance),
            Action::EnqueueEvent { instance } => environment::enqueue_event(n, instance),
            Action::StartInstance { instance } => environment::start_instance(n, instance),
            Action::DeleteInstance { instance } => environment::delete_instance(n, instance),
            Action::RequeueDeadLetter { index } => environment::requeue_dead_letter(n, index),
            Action::SweepOrphans { instance } => environment::sweep_orphans(n, instance),
        }
        next.normalize(cfg);
        Some(next)
    }
}

impl Model for ClaimModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![self.initial_state()]
    }

    fn actions(&self, state: &State, actions: &mut Vec<Action>) {
        enabled::enabled_actions(&self.config, state, actions);
    }

    fn next_state(&self, state: &State, action: Action) -> Option<State> {
        self.step(state, action)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::selected(&self.config)
    }
}
