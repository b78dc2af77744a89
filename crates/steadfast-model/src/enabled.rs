//! When each step can happen.

use crate::action::Action;
use crate::config::{CeilingProtocol, ModelConfig};
use crate::state::{Dispatcher, Execution, State};

/// Every step that can happen in `s`.
pub fn enabled_actions(cfg: &ModelConfig, s: &State, out: &mut Vec<Action>) {
    let instances = 0..s.instances.len() as u8;
    if let Some(dispatcher) = s.first_idle() {
        for instance in instances.clone() {
            out.push(Action::Claim {
                dispatcher,
                instance,
            });
            out.push(Action::FailAtCeiling { instance });
        }
    }
    for dispatcher in 0..s.dispatchers.len() {
        out.extend([
            Action::EnforceCeilingAfterClaim { dispatcher },
            Action::AckTurn {
                dispatcher,
                complete: false,
            },
            Action::AckTurn {
                dispatcher,
                complete: true,
            },
            Action::AckPoison { dispatcher },
            Action::RenewLease { dispatcher },
            Action::Abandon { dispatcher },
            Action::GiveBack { dispatcher },
            Action::Crash { dispatcher },
        ]);
    }
    for instance in instances {
        out.extend([
            Action::ExpireLease { instance },
            Action::EnqueueEvent { instance },
            Action::StartInstance { instance },
            Action::DeleteInstance { instance },
            Action::SweepOrphans { instance },
        ]);
    }
    for index in 0..s.dead_letters.len() {
        // Equal dead letters are one choice.
        if index == 0 || s.dead_letters[index - 1] != s.dead_letters[index] {
            out.push(Action::RequeueDeadLetter { index });
        }
    }
    out.retain(|a| is_enabled(cfg, s, a));
}

/// Whether `a` can happen in `s`.
pub fn is_enabled(cfg: &ModelConfig, s: &State, a: &Action) -> bool {
    let holding = |d: usize| match s.dispatchers.get(d) {
        Some(Dispatcher::Holding(c)) => Some(c),
        _ => None,
    };
    match *a {
        Action::Claim {
            dispatcher,
            instance,
        } => {
            let inst = s.instance(instance);
            s.first_idle() == Some(dispatcher)
                && inst.claimable()
                && match cfg.ceiling {
                    CeilingProtocol::InClaim => !inst.reached(cfg.ceiling_count()),
                    CeilingProtocol::AfterClaim => inst.max_attempts() < cfg.attempt_cap,
                }
        }
        Action::FailAtCeiling { instance } => {
            let inst = s.instance(instance);
            cfg.ceiling == CeilingProtocol::InClaim
                && s.first_idle().is_some()
                && inst.claimable()
                && inst.reached(cfg.ceiling_count())
        }
        Action::EnforceCeilingAfterClaim { dispatcher } => {
            matches!(s.dispatchers.get(dispatcher), Some(Dispatcher::Settling(_)))
        }
        Action::AckTurn {
            dispatcher,
            complete,
        } => holding(dispatcher).is_some_and(|c| {
            c.attempts <= cfg.max_attempts && (!complete || !c.seen.is_terminal())
        }),
        Action::AckPoison { dispatcher } => {
            holding(dispatcher).is_some_and(|c| c.attempts > cfg.max_attempts)
        }
        // The runtime renews and abandons only while it runs a turn, never on the poison
        // path; a give-back happens before the runtime has seen the item at all.
        Action::RenewLease { dispatcher } => {
            holding(dispatcher).is_some_and(|c| c.attempts <= cfg.max_attempts)
        }
        Action::Abandon { dispatcher } => {
            holding(dispatcher).is_some_and(|c| c.attempts <= cfg.max_attempts) && s.fault_allowed()
        }
        Action::GiveBack { dispatcher } => holding(dispatcher).is_some() && s.fault_allowed(),
        Action::Crash { dispatcher } => {
            s.dispatchers
                .get(dispatcher)
                .is_some_and(|d| d.claim().is_some())
                && s.fault_allowed()
        }
        Action::ExpireLease { instance } => s
            .instance(instance)
            .lease()
            .is_some_and(|l| l.live && (!s.token_held(l.token) || s.fault_allowed())),
        Action::EnqueueEvent { .. } => s.budgets.events > 0,
        Action::StartInstance { instance } => {
            s.budgets.starts > 0 && s.instance(instance).startable()
        }
        Action::DeleteInstance { instance } => {
            let inst = s.instance(instance);
            s.budgets.deletes > 0 && (inst.row.is_some() || inst.execution != Execution::NoRow)
        }
        Action::RequeueDeadLetter { index } => {
            s.budgets.requeues > 0 && index < s.dead_letters.len()
        }
        Action::SweepOrphans { instance } => {
            let inst = s.instance(instance);
            let runnable = inst.runnable();
            inst.messages
                .iter()
                .any(|m| m.waiting && (runnable || m.token.is_none()))
        }
    }
}
