//! The fault suite: several real `fault-worker` processes on the real PostgreSQL, one schema
//! per test, a fault injected mid-run, then every invariant checked from the database (see
//! `support::scenario`). At most two scenarios run at once (`support::scenario_slot`).
//! What is covered and what is not: `docs/faults.md`.

mod support;

mod clock_skew;
mod dropped_connections;
mod kill9;
mod pool_exhaustion;
mod server_restart;
