//! A model of steadfast-pg's orchestrator-queue claim protocol, checked with
//! [stateright](https://docs.rs/stateright).
//!
//! Dispatchers claim instances (`functions/claim_orchestration.sql`), then ack, poison-ack,
//! renew, abandon, give back or crash; leases run out; the client enqueues events and
//! starts ids; the admin deletes instances and requeues dead letters; the orphan sweep
//! dead-letters messages nothing started. Every step is one statement or transaction of
//! the real code ([`Action`] names which), atomic as it is in PostgreSQL because every
//! writer of an instance's rows first locks its lease row.
//!
//! What is modelled, the bounds, the properties and the known counterexamples:
//! `docs/model.md`.

pub mod action;
pub mod claim;
pub mod config;
pub mod display;
pub mod dispositions;
pub mod enabled;
pub mod environment;
pub mod liveness;
pub mod model;
pub mod properties;
pub mod reduce;
pub mod rows;
pub mod state;
pub mod symmetry;

pub use action::Action;
pub use config::{CeilingProtocol, ModelConfig};
pub use model::ClaimModel;
pub use state::State;
