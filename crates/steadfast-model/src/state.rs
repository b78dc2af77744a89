//! The modelled database rows, dispatchers and ghost variables.
//!
//! Rows are abstracted to what the claim protocol reads or writes: per instance id its
//! `instance_leases` row, its current execution's status (the `instances` and
//! `executions` rows together) and its `orchestrator_queue` rows; the `dead_letters`
//! table; and per dispatcher the claim it holds. Time is not modelled: a lease is live
//! or has run out, and every delay (backoff, visibility, orphan timeout) is a step that
//! may happen at any moment.

/// A lock token (`sf1.<nonce>.<hex(instance)>`). Tokens are only ever compared for
/// equality, so a fresh one is any value no row or dispatcher refers to.
pub type Token = u8;

/// A message's ghost id, only used by the properties (which claim batches share a
/// message); like tokens, a fresh one is any id nothing refers to.
pub type MessageId = u8;

/// Set of message ids (bit `id`).
pub type MessageSet = u32;

/// What kind of orchestrator work item a message is (`functions/starts_instance.sql`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `StartOrchestration`: makes its instance runnable.
    Start,
    /// Any other item (`ExternalRaised`, completions, timers).
    Event,
}

/// An `orchestrator_queue` row. Every message is visible (abandon delays and timers are
/// not modelled).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Message {
    pub id: MessageId,
    pub kind: Kind,
    /// `attempt_count`: how many times a claim handed it out.
    pub attempts: u8,
    /// `lock_token`: the last claim that tagged it (kept after abandon, like the SQL).
    pub token: Option<Token>,
    /// `waiting`: stored outside the claim's ready index (migration 0006).
    pub waiting: bool,
}

/// The lease part of an `instance_leases` row (`lock_token`, `locked_until`,
/// `attempt_count`), present from a claim's stamp until a release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Lease {
    pub token: Token,
    /// `locked_until > clock_timestamp()`.
    pub live: bool,
    /// The claim's attempt (the max over its batch), as `stamp_lease` records it.
    pub attempts: u8,
}

/// An `instance_leases` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LeaseRow {
    /// `runnable_from` is set (and due): a start for the instance is (or was) visible.
    pub runnable: bool,
    pub lease: Option<Lease>,
}

/// Status of the instance's current execution (execution 1: continue-as-new is not
/// modelled). `NoRow`: no `executions` row yet (or deleted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Execution {
    NoRow,
    Running,
    Completed,
    Failed,
}

impl Execution {
    pub fn is_terminal(self) -> bool {
        matches!(self, Execution::Completed | Execution::Failed)
    }
}

/// Everything stored for one instance id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Instance {
    /// Ghost: the incarnation of the id, bumped by each deletion. With the generation
    /// fence this is also what the lease row and the tokens carry.
    pub generation: u8,
    pub row: Option<LeaseRow>,
    pub execution: Execution,
    /// Sorted by id.
    pub messages: Vec<Message>,
}

impl Instance {
    pub fn lease(&self) -> Option<Lease> {
        self.row.and_then(|r| r.lease)
    }

    pub fn runnable(&self) -> bool {
        self.row.is_some_and(|r| r.runnable)
    }

    pub fn lease_is_live(&self) -> bool {
        self.lease().is_some_and(|l| l.live)
    }

    /// Whether the lease row's token is `token` (any liveness).
    pub fn leased_to(&self, token: Token) -> bool {
        self.lease().is_some_and(|l| l.token == token)
    }

    /// A claim candidate (`claim_orchestration`'s scan and its `FOR UPDATE SKIP LOCKED`
    /// try): runnable, no live lease (an expired one has served its backoff: a step), and
    /// a ready (not waiting) message.
    pub fn claimable(&self) -> bool {
        self.runnable() && !self.lease_is_live() && self.messages.iter().any(|m| !m.waiting)
    }

    /// A visible message was already handed out `count` times or more.
    pub fn reached(&self, count: u8) -> bool {
        self.messages.iter().any(|m| m.attempts >= count)
    }

    pub fn max_attempts(&self) -> u8 {
        self.messages.iter().map(|m| m.attempts).max().unwrap_or(0)
    }

    /// Not started: never, or deleted since (no start queued, no execution).
    pub fn startable(&self) -> bool {
        !self.runnable() && self.execution == Execution::NoRow
    }

    pub fn release_lease(&mut self) {
        if let Some(row) = &mut self.row {
            row.lease = None;
        }
    }
}

/// A claim a dispatcher holds: what the claim statement returned to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Claim {
    pub instance: u8,
    pub token: Token,
    /// Ghost: the incarnation claimed (carried by the token with the generation fence).
    pub generation: u8,
    /// `max(msg_attempts)`: what the runtime compares with `max_attempts`.
    pub attempts: u8,
    /// Ghost: the claimed batch.
    pub batch: MessageSet,
    /// The execution status the claim read (the runtime's view of the history).
    pub seen: Execution,
}

/// A dispatcher (one fetch loop of a runtime).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dispatcher {
    Idle,
    /// The runtime has the claimed item.
    Holding(Claim),
    /// Old protocol only: the claim committed a count above `M + 1` and the Rust ceiling
    /// transaction has not run yet.
    Settling(Claim),
}

impl Dispatcher {
    pub fn claim(&self) -> Option<&Claim> {
        match self {
            Dispatcher::Idle => None,
            Dispatcher::Holding(c) | Dispatcher::Settling(c) => Some(c),
        }
    }
}

/// A `dead_letters` row (orchestrator queue). Reason, error and attempt count are not
/// kept: only what a requeue puts back matters to the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeadLetter {
    pub instance: u8,
    pub kind: Kind,
}

/// What the client and admin may still do, and how many faults may still happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Budgets {
    pub events: u8,
    pub starts: u8,
    pub deletes: u8,
    pub requeues: u8,
    pub faults: Option<u8>,
}

/// Ghost variables for the safety properties. Once set, a flag stays set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ghost {
    /// Messages some committed turn (ack or poison disposition) took, restricted to the
    /// ids a held claim still refers to.
    pub committed: MessageSet,
    /// A turn committed a batch sharing a message with a batch committed before.
    pub double_commit: bool,
    /// A turn or poison disposition committed into another incarnation than it claimed.
    pub stale_commit: bool,
    /// A terminal event (or a status) was written into an execution already terminal.
    pub second_terminal: bool,
}

/// The whole modelled system.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct State {
    pub instances: Vec<Instance>,
    pub dispatchers: Vec<Dispatcher>,
    /// Sorted (a multiset).
    pub dead_letters: Vec<DeadLetter>,
    pub budgets: Budgets,
    pub ghost: Ghost,
}

impl State {
    pub fn instance(&self, i: u8) -> &Instance {
        &self.instances[i as usize]
    }

    pub fn instance_mut(&mut self, i: u8) -> &mut Instance {
        &mut self.instances[i as usize]
    }

    pub fn messages(&self) -> impl Iterator<Item = &Message> {
        self.instances.iter().flat_map(|i| i.messages.iter())
    }

    pub fn queue_is_empty(&self) -> bool {
        self.instances.iter().all(|i| i.messages.is_empty())
    }

    pub fn first_idle(&self) -> Option<usize> {
        self.dispatchers
            .iter()
            .position(|d| matches!(d, Dispatcher::Idle))
    }

    /// Whether any dispatcher still holds a claim with this token.
    pub fn token_held(&self, token: Token) -> bool {
        self.dispatchers
            .iter()
            .filter_map(Dispatcher::claim)
            .any(|c| c.token == token)
    }

    /// A token no row and no dispatcher refers to.
    pub fn fresh_token(&self) -> Token {
        let mut used: u64 = 0;
        for inst in &self.instances {
            if let Some(l) = inst.lease() {
                used |= 1 << l.token;
            }
            for m in &inst.messages {
                if let Some(t) = m.token {
                    used |= 1 << t;
                }
            }
        }
        for c in self.dispatchers.iter().filter_map(Dispatcher::claim) {
            used |= 1 << c.token;
        }
        used.trailing_ones() as Token
    }

    /// A message id no row, claim or ghost set refers to.
    pub fn fresh_message_id(&self) -> MessageId {
        let mut used = self.ghost.committed;
        for m in self.messages() {
            used |= 1 << m.id;
        }
        for c in self.dispatchers.iter().filter_map(Dispatcher::claim) {
            used |= c.batch;
        }
        used.trailing_ones() as MessageId
    }

    /// Forget committed ids that no held claim refers to (they can no longer matter),
    /// so that equal futures are equal states.
    pub fn prune_ghost(&mut self) {
        let held = self
            .dispatchers
            .iter()
            .filter_map(Dispatcher::claim)
            .fold(0, |acc, c| acc | c.batch);
        self.ghost.committed &= held;
    }

    /// Spend one fault; false when the budget is used up.
    pub fn spend_fault(&mut self) -> bool {
        match &mut self.budgets.faults {
            None => true,
            Some(0) => false,
            Some(n) => {
                *n -= 1;
                true
            }
        }
    }

    pub fn fault_allowed(&self) -> bool {
        self.budgets.faults != Some(0)
    }

    /// Whether the client or admin can still add a message.
    pub fn can_add_messages(&self) -> bool {
        self.budgets.events > 0
            || (self.budgets.starts > 0 && self.instances.iter().any(Instance::startable))
            || (self.budgets.requeues > 0 && !self.dead_letters.is_empty())
    }
}
