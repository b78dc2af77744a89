//! steadfast-node: the napi-rs v3 addon behind the `steadfast` npm package.
//!
//! The native surface is deliberately small and string-typed: inputs and outputs cross the
//! boundary as JSON text, and the hand-written JS layer in `lib/` owns argument validation,
//! JSON encoding and the generator protocol. Every Rust error leaves through
//! [`errors::JsError`] with a stable `code`; every panic is caught (`catch_unwind` on sync
//! entry points, [`errors::guard`] on async ones).

#![deny(clippy::all)]
// napi-derive registers exports only outside `cfg(test)`, so in the unit-test build the
// exported functions look unused; the regular build still reports real dead code.
#![cfg_attr(test, allow(dead_code))]

mod activity;
mod client;
mod client_inspect;
mod client_manage;
mod client_pages;
mod client_waits;
mod diagnostics;
mod errors;
mod event_loop;
mod generator;
mod history;
mod lifecycle;
mod log_output;
mod options;
mod prometheus;
mod providers;
mod retried_turns;
mod retry;
mod runtime;
mod tracing_init;
