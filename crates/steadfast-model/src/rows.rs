//! Statement fragments several steps share, each named after the SQL it mirrors, plus the
//! ghost bookkeeping of a commit.

use crate::state::{Claim, DeadLetter, Execution, Kind, LeaseRow, Message, State};

impl State {
    /// `queries/dead_letter_orch_messages.sql`: every handed-out message of the instance
    /// (`attempt_count > 0`, whichever token tagged it) moves to dead letters
    /// (`functions/dead_letter_handed_out.sql` in the new code).
    pub fn dead_letter_handed_out(&mut self, i: u8) {
        let inst = self.instance_mut(i);
        let (moved, kept): (Vec<Message>, Vec<Message>) =
            inst.messages.drain(..).partition(|m| m.attempts > 0);
        inst.messages = kept;
        for m in moved {
            self.dead_letter(i, m.kind);
        }
    }

    pub fn dead_letter(&mut self, instance: u8, kind: Kind) {
        let letter = DeadLetter { instance, kind };
        let at = self.dead_letters.partition_point(|d| *d <= letter);
        self.dead_letters.insert(at, letter);
    }

    /// `write_turn` (migration 0003) writing a terminal status (`OrchestrationFailed` or
    /// `OrchestrationCompleted` and its status): a second one into the same execution is
    /// what the "one terminal event" property forbids.
    pub fn write_terminal(&mut self, i: u8, status: Execution) {
        debug_assert!(status.is_terminal());
        if self.instance(i).execution.is_terminal() {
            self.ghost.second_terminal = true;
        }
        self.instance_mut(i).execution = status;
    }

    /// `write_turn` of an ordinary turn that leaves the execution running (it creates the
    /// `executions` row on the first turn). Writing into a terminal execution reopens it:
    /// also forbidden by the "one terminal event" property.
    pub fn write_running(&mut self, i: u8) {
        if self.instance(i).execution.is_terminal() {
            self.ghost.second_terminal = true;
        }
        self.instance_mut(i).execution = Execution::Running;
    }

    /// The execution fails as poison unless it is terminal, or there is nothing to fail:
    /// no execution yet and no start in the batch (the ceiling's rule: `failed` in
    /// `functions/fail_stopped_instance.sql`, `can_fail` in `enforce_orchestration_ceiling`).
    pub fn fail_unless_terminal(&mut self, i: u8, has_start: bool) {
        let execution = self.instance(i).execution;
        if !execution.is_terminal() && (execution != Execution::NoRow || has_start) {
            self.write_terminal(i, Execution::Failed);
        }
    }

    /// Ghost bookkeeping of a committed turn or poison disposition of `claim`.
    pub fn record_commit(&mut self, claim: &Claim) {
        if claim.generation != self.instance(claim.instance).generation {
            self.ghost.stale_commit = true;
        }
        if self.ghost.committed & claim.batch != 0 {
            self.ghost.double_commit = true;
        }
        self.ghost.committed |= claim.batch;
    }

    /// `functions/enqueue_orchestrator.sql` for one message: the lease row is created if
    /// missing; a start makes the instance runnable; the message waits unless its
    /// instance is runnable.
    pub fn enqueue(&mut self, i: u8, kind: Kind) {
        let id = self.fresh_message_id();
        let inst = self.instance_mut(i);
        let row = inst.row.get_or_insert(LeaseRow {
            runnable: false,
            lease: None,
        });
        if kind == Kind::Start {
            row.runnable = true;
        }
        let waiting = !row.runnable;
        inst.messages.push(Message {
            id,
            kind,
            attempts: 0,
            token: None,
            waiting,
        });
        inst.messages.sort();
    }
}
