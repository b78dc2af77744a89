//! One-line renderings of states and traces, for counterexample reports.

use std::fmt::{self, Display, Formatter};

use stateright::Path;

use crate::action::Action;
use crate::state::{Claim, Dispatcher, Execution, Instance, Kind, State};

impl Display for Instance {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let execution = match self.execution {
            Execution::NoRow => "-",
            Execution::Running => "Running",
            Execution::Completed => "Completed",
            Execution::Failed => "Failed",
        };
        write!(f, "gen {} exec {execution}", self.generation)?;
        match self.row {
            None => write!(f, " no-lease-row")?,
            Some(row) => {
                if !row.runnable {
                    write!(f, " not-runnable")?;
                }
                if let Some(l) = row.lease {
                    let state = if l.live { "live" } else { "expired" };
                    write!(f, " lease t{} {state}", l.token)?;
                    // Only recorded with the generation fence (see `State::normalize`).
                    if l.attempts > 0 {
                        write!(f, " a{}", l.attempts)?;
                    }
                }
            }
        }
        write!(f, " [")?;
        for (n, m) in self.messages.iter().enumerate() {
            let kind = match m.kind {
                Kind::Start => "Start",
                Kind::Event => "Event",
            };
            let sep = if n == 0 { "" } else { ", " };
            write!(f, "{sep}m{} {kind} a{}", m.id, m.attempts)?;
            if let Some(t) = m.token {
                write!(f, " t{t}")?;
            }
            if m.waiting {
                write!(f, " waiting")?;
            }
        }
        write!(f, "]")
    }
}

impl Display for Claim {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "i{} t{} gen {} a{} saw {:?}",
            self.instance, self.token, self.generation, self.attempts, self.seen
        )
    }
}

impl Display for State {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (i, inst) in self.instances.iter().enumerate() {
            write!(f, "i{i}: {inst} | ")?;
        }
        for (d, disp) in self.dispatchers.iter().enumerate() {
            match disp {
                Dispatcher::Idle => write!(f, "D{d} idle | ")?,
                Dispatcher::Holding(c) => write!(f, "D{d} holds {c} | ")?,
                Dispatcher::Settling(c) => write!(f, "D{d} settling {c} | ")?,
            }
        }
        write!(f, "dead letters {}", self.dead_letters.len())?;
        let g = &self.ghost;
        for (set, name) in [
            (g.double_commit, "DOUBLE-COMMIT"),
            (g.stale_commit, "STALE-INCARNATION-COMMIT"),
            (g.second_terminal, "SECOND-TERMINAL"),
        ] {
            if set {
                write!(f, " {name}")?;
            }
        }
        Ok(())
    }
}

/// A numbered trace: each step, then the state it leads to.
pub fn trace<'a>(
    initial: &State,
    steps: impl IntoIterator<Item = (&'a Action, &'a State)>,
) -> String {
    let mut out = format!("   initial: {initial}\n");
    for (n, (action, state)) in steps.into_iter().enumerate() {
        out.push_str(&format!("{:>3}. {action:?}\n      -> {state}\n", n + 1));
    }
    out
}

/// A stateright path as [`trace`].
pub fn path(path: &Path<State, Action>) -> String {
    let steps = path.clone().into_vec();
    let initial = &steps[0].0;
    let pairs: Vec<(&Action, &State)> = steps
        .windows(2)
        .filter_map(|w| w[0].1.as_ref().map(|a| (a, &w[1].0)))
        .collect();
    trace(initial, pairs)
}

impl Display for crate::liveness::Trace {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let steps = self.steps.iter().map(|(a, s)| (a, s));
        f.write_str(&trace(&self.initial, steps))
    }
}
