//! The fault suite's workload and worker configuration. The `fault-worker` binary runs
//! [`workload`] on the duroxide runtime over steadfast-pg; the integration tests under
//! `tests/faults/` start several of those processes, break things around them and then
//! check from the database that every orchestration ended as [`workload::Kind::expected`]
//! says. See `docs/faults.md`.

pub mod config;
pub mod workload;
