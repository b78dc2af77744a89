//! The fault suite: several real `fault-worker` processes on the real PostgreSQL, one schema
//! per test, a fault injected mid-run, then every invariant checked from the database (see
//! `support::scenario`). Run with `cargo test -p steadfast-faults -- --test-threads=2`.
//! What is covered and what is not: `docs/faults.md`.

mod support;

mod clock_skew;
mod dropped_connections;
mod kill9;
mod pool_exhaustion;
mod server_restart;
