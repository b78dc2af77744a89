//! What one model check explores: how many dispatchers and instance ids, the attempt
//! budget, which ceiling protocol and fences the database runs, and the budgets that keep
//! client and admin activity (and, for liveness, faults) finite.

/// Where the attempt ceiling (`claim.max_attempts = M`) is enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CeilingProtocol {
    /// The new protocol: the claim statement itself (`functions/fail_stopped_instance.sql`,
    /// called from `functions/claim_orchestration.sql`) refuses to count a candidate with a
    /// message already handed out `M + 1` times; it dead-letters the instance's handed-out
    /// messages, fails the execution and releases the lease, all in that one statement.
    InClaim,
    /// The old protocol: the claim commits the increment (to `M + 2`), and a later,
    /// separate transaction from Rust (`enforce_orchestration_ceiling` in `poison.rs`)
    /// gives it back, dead-letters and fails the instance. A crash between the two leaves
    /// the count at `M + 2`, and the next claim climbs further.
    AfterClaim,
}

/// One model check's bounds and protocol options.
#[derive(Clone, Debug)]
pub struct ModelConfig {
    /// Dispatchers (runtime fetch loops, any number of processes).
    pub dispatchers: usize,
    /// Instance ids.
    pub instances: usize,
    /// How many of the ids are started (a queued `StartOrchestration`) initially; the
    /// others have no rows at all.
    pub started: usize,
    /// `claim.max_attempts` (and the runtime's `max_attempts`): `M`.
    pub max_attempts: u8,
    pub ceiling: CeilingProtocol,
    /// In the code since schema version 7 (`src/fence.rs`, migration 0007; PostgreSQL tests
    /// in `tests/stale_dispositions.rs`); `false` is the code before it. Lock tokens carry the instance's incarnation
    /// (a value the lease row gets when it is created) and the claimed attempt, and a
    /// poison disposition without a live lease is refused unless both still match the
    /// lease row. (Acks, renewals, abandons and give-backs already compare the whole token
    /// with the lease row, which a new incarnation's row can never hold.)
    pub generation_fence: bool,
    /// In the code since this landing (`commit_poison_disposition` in `src/poison.rs`; test
    /// `a_poison_with_a_live_lease_cannot_fail_a_completed_execution`); `false` is the code
    /// before it. A poison disposition committed *with* a live
    /// lease writes no `OrchestrationFailed` into an execution that is already terminal
    /// (it still dead-letters the messages and releases the lease), as the lease-less path
    /// and the ceiling already do.
    pub poison_spares_terminal: bool,
    /// Client events (`raise_event`) that may be enqueued, to any id.
    pub events: u8,
    /// `StartOrchestration`s that may be enqueued for an id that is not started (never
    /// started, or deleted: a new incarnation of the same id).
    pub starts: u8,
    /// Admin instance deletions (forced).
    pub deletes: u8,
    /// Admin dead-letter requeues.
    pub requeues: u8,
    /// `None`: faults (dispatcher crash or lost reply, abandon, give-back, a lease running
    /// out under a dispatcher that still holds it) happen any number of times; the state
    /// graph then has cycles, fine for safety and for [`crate::liveness`]. `Some(n)`: at
    /// most `n` faults in a run, which makes every run finite, as stateright's
    /// `eventually` needs.
    pub faults: Option<u8>,
    /// Old protocol only: a claim that would hand a message out more than this many times
    /// is not explored (the count climbs without bound there).
    pub attempt_cap: u8,
    /// Check only the properties with these names (all when empty). Checking one property
    /// lets the breadth-first checker stop at its first, shortest, counterexample.
    pub only: Vec<&'static str>,
}

impl ModelConfig {
    /// The CI bound: 3 dispatchers, 2 instance ids (both started), `max_attempts`, the new
    /// ceiling, no fences, one client event, one delete, one re-start, one requeue,
    /// faults unbounded.
    pub fn ci(max_attempts: u8) -> Self {
        Self {
            dispatchers: 3,
            instances: 2,
            started: 2,
            max_attempts,
            ceiling: CeilingProtocol::InClaim,
            generation_fence: false,
            poison_spares_terminal: false,
            events: 1,
            starts: 1,
            deletes: 1,
            requeues: 1,
            faults: None,
            attempt_cap: max_attempts + 3,
            only: Vec::new(),
        }
    }

    /// The count the ceiling allows: a message is handed out at most `M + 1` times.
    pub fn ceiling_count(&self) -> u8 {
        self.max_attempts + 1
    }

    pub fn with_ceiling(mut self, ceiling: CeilingProtocol) -> Self {
        self.ceiling = ceiling;
        self
    }

    pub fn with_generation_fence(mut self) -> Self {
        self.generation_fence = true;
        self
    }

    pub fn with_terminal_spared(mut self) -> Self {
        self.poison_spares_terminal = true;
        self
    }

    /// Both proposed fixes on: the generation fence and a live-lease poison that spares a
    /// terminal execution.
    pub fn fenced(self) -> Self {
        self.with_generation_fence().with_terminal_spared()
    }

    pub fn only(mut self, property: &'static str) -> Self {
        self.only.push(property);
        self
    }
}
