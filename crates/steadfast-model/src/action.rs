//! The steps of the model. Each variant is one database statement or transaction (atomic
//! in the model, as it is in PostgreSQL: every writer of an instance's rows first locks
//! its lease row) or one event of the environment, and names what it stands for.
//! Paths are relative to `crates/steadfast-pg/`.

/// One step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// `functions/claim_orchestration.sql` (via `queries/orch_claim.sql`): a claim of a
    /// candidate (runnable, no live lease, a ready message) that is not at the ceiling.
    /// Tags every visible message of the instance with a fresh token, adds 1 to their
    /// `attempt_count`, clears `waiting`, and stamps the lease last (`stamp_lease`,
    /// migration 0002). A runnable instance with no execution and no start in the batch
    /// is parked instead (messages back to waiting, attempt given back, `runnable_from`
    /// from `functions/first_queued_start.sql`). Only the first idle dispatcher is
    /// offered the claim: idle dispatchers are interchangeable. Whether the reply reaches
    /// the runtime is the next step's business: a lost reply is [`Action::Crash`].
    Claim { dispatcher: usize, instance: u8 },
    /// `functions/fail_stopped_instance.sql`, inside the same `claim_orchestration` statement
    /// (new protocol): the chosen candidate has a message already handed out `M + 1`
    /// times. No increment: the instance's handed-out messages (`attempt_count > 0`) move
    /// to dead letters ('attempt_ceiling', as `queries/dead_letter_orch_messages.sql`),
    /// the current execution fails as poison (`OrchestrationFailed`, status `Failed`)
    /// unless it is already terminal, the lease is released (`release_lease`), and the
    /// claim moves on (a next [`Action::Claim`]).
    FailAtCeiling { instance: u8 },
    /// Old protocol: `enforce_orchestration_ceiling` in `src/poison.rs`, the separate
    /// transaction after a claim that committed a count above `M + 1`: locks the lease row
    /// by token (`queries/orch_lease_lock_by_token.sql`; gone: nothing), gives the
    /// increment back (`queries/orch_abandon_messages.sql`), dead-letters
    /// (`queries/dead_letter_orch_messages.sql`), fails the execution unless terminal
    /// (`write_turn`) and releases the lease (`queries/orch_lease_release.sql`).
    EnforceCeilingAfterClaim { dispatcher: usize },
    /// `ack_turn` (migration 0003, via `queries/turn_ack.sql`): an ordinary turn (the
    /// runtime saw `attempt_count <= M`). Only with the token's lease live: deletes the
    /// claimed messages, writes the turn (`write_turn`: the execution keeps running, or
    /// completes when `complete`; nothing when the runtime saw a terminal history) and
    /// releases the lease. Otherwise 'expired' / 'unknown' and nothing is written.
    AckTurn { dispatcher: usize, complete: bool },
    /// `ack_poison` in `src/orchestration.rs`, the runtime's poison disposition (it saw
    /// `attempt_count > M`). With the token's lease live: `commit_poison_disposition`
    /// (`src/poison.rs`: `queries/dead_letter_orch_messages.sql`, `write_turn` with
    /// `OrchestrationFailed`, `queries/orch_lease_release.sql`). Without:
    /// `commit_poison_without_lease`, keyed on (instance from the token, execution):
    /// refused only when the lease row is gone (instance deleted,
    /// `queries/orch_lease_lock_by_instance.sql`) or the execution is terminal
    /// (`queries/execution_state.sql`); with the generation fence also when the lease
    /// row's incarnation or recorded attempt differs from the token's.
    AckPoison { dispatcher: usize },
    /// `queries/orch_lease_renew.sql`: extends only a live lease holding the token. A
    /// refused renewal ends the dispatcher's turn (the runtime treats the lease as lost).
    RenewLease { dispatcher: usize },
    /// `abandon_orchestration` in `src/orchestration.rs`: lease row locked by token
    /// (`queries/orch_lease_lock_by_token.sql`, any liveness), then
    /// `queries/orch_abandon_messages.sql` (the runtime's abandon keeps the attempt) and
    /// `queries/orch_lease_release.sql`.
    Abandon { dispatcher: usize },
    /// `give_back_claim` (migration 0004, via `queries/orch_claim_give_back.sql`): a
    /// cancelled fetch's claim, while the token is still the lease's (any liveness):
    /// messages untagged with their attempt returned, lease released.
    GiveBack { dispatcher: usize },
    /// The dispatcher's process dies (or the claim's reply, or the ack's, is lost): it
    /// forgets its claim. Whatever the database committed stays.
    Crash { dispatcher: usize },
    /// Time: the lease's `locked_until` passes (a slow turn, or the database clock jumping
    /// forward), and its redelivery backoff (`redelivery_at`, migration 0002) with it.
    ExpireLease { instance: u8 },
    /// Client: `functions/enqueue_orchestrator.sql` (via `queries/orch_enqueue.sql`) of an
    /// event. Creates the lease row if missing; the message waits unless the instance is
    /// runnable.
    EnqueueEvent { instance: u8 },
    /// Client: `functions/enqueue_orchestrator.sql` of a `StartOrchestration` for an id
    /// that is not started (never, or deleted: a new incarnation of the same id). Makes
    /// the instance runnable.
    StartInstance { instance: u8 },
    /// Admin: `queries/admin_lock_leases.sql` then `queries/admin_delete_instances.sql`
    /// (forced): every row of the instance, lease row included, except dead letters.
    DeleteInstance { instance: u8 },
    /// Admin: `queries/dead_letter_take.sql` then `functions/enqueue_orchestrator.sql`
    /// (`requeue_dead_letter` in `src/dead_letters.rs`): the dead letter goes back on the
    /// queue as a new message with attempt count 0.
    RequeueDeadLetter { index: usize },
    /// `functions/sweep_orphans.sql` (via `queries/orch_orphans_sweep.sql`) for one
    /// instance, its orphan timeout passed: waiting messages of a runnable instance become
    /// ready; those of an instance nothing started (and untagged) move to dead letters
    /// ('orphaned'), and a lease row left without messages is removed.
    SweepOrphans { instance: u8 },
}
