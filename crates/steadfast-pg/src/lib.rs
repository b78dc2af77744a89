//! # steadfast-pg
//!
//! A PostgreSQL provider for the [duroxide](https://docs.rs/duroxide) durable-execution
//! runtime that cannot livelock. It implements duroxide's `Provider` and `ProviderAdmin`
//! traits with these guarantees (each one has a test that fails without it):
//!
//! 1. **Claims never block.** A fetch takes an instance's lease row with
//!    `FOR UPDATE SKIP LOCKED`; a row any other transaction holds is skipped, never waited on.
//! 2. **Leases start at the claim, by the database clock.** Every lease and every
//!    liveness predicate uses `clock_timestamp()` when it is needed; no caller time is used.
//! 3. **Fan-out.** Candidates are drawn at random from the oldest `fanout` eligible
//!    instances; messages of one instance stay in order.
//! 4. **Bounded.** At most `max_claim_attempts` tries and `max_claim_duration` per fetch;
//!    when exhausted the fetch returns `None` and raises a `ClaimExhausted` diagnostic.
//! 5. **Poison independent of the lease.** A poison disposition commits even when its
//!    lease has expired, keyed on (instance, generation, execution, attempt count); one
//!    from a released or superseded claim or an older incarnation is refused.
//! 6. **Attempt ceiling inside the claim statement** (`ClaimOptions::max_attempts`, default
//!    10): no message is handed out more than `max_attempts + 1` times, whatever happens
//!    after the claim commits.
//! 7. **Redelivery backoff applied by the claim** when a lease ran out without an ack.
//! 8. **Nothing lost:** poisoned messages go to a dead-letter table.
//! 9. **Typed diagnostics** on a broadcast channel and in `tracing` (`event` field).
//! 10. **Long polling** with `LISTEN/NOTIFY`, or a session-free mode for PgBouncer.
//! 11. **Only runnable instances are claim candidates.** Messages to an instance nothing
//!     has started never cost a claim; after `ClaimOptions::orphan_timeout` they are
//!     dead-lettered as `orphaned` with a `MessagesOrphaned` diagnostic.

mod admin;
mod claim;
pub mod database_url;
mod dead_letters;
mod deadline;
mod diagnostics;
mod error;
mod fence;
mod fetch_gate;
mod give_back;
mod handoff;
mod instance_pages;
mod layer;
mod lease_book;
mod local_wakes;
pub mod metrics;
mod migrate;
mod options;
mod orchestration;
mod orphans;
mod password;
mod poison;
pub mod poison_rule;
mod polling;
mod provider;
mod provider_trait;
mod queries;
mod queue_wake;
mod reads;
mod run;
mod schema;
mod session_wakes;
mod status;
mod token;
mod transient;
mod turn;
mod wait;
mod wake;
mod watched_starts;
mod worker;

pub use dead_letters::{DeadLetter, DeadLetterFilter};
pub use diagnostics::{Diagnostic, DiagnosticKind, QueueKind};
pub use error::SetupError;
pub use instance_pages::{
    InstanceCursor, InstancePage, InstanceQuery, MAX_FILTER_TIME_MS, MAX_INSTANCE_PAGE,
};
pub use layer::{Layered, ProviderLayer};
pub use migrate::SCHEMA_VERSION;
pub use options::{
    ClaimOptions, DEFAULT_MAX_ATTEMPTS, PollingMode, ProviderOptions, RedeliveryBackoff,
};
pub use password::{PasswordFeed, RotatingPassword};
pub use provider::PostgresProvider;
pub use schema::{DEFAULT_SCHEMA, RESERVED_SCHEMAS, SchemaName};

#[cfg(test)]
mod send_checks {
    fn is_send<T: Send>(_: T) {}
    #[allow(dead_code)]
    fn futures_are_send(p: &crate::PostgresProvider, o: crate::ProviderOptions) {
        is_send(crate::PostgresProvider::connect_with_options(o));
        is_send(p.max_attempt_count("x"));
        is_send(p.list_dead_letters(&Default::default()));
    }
}
