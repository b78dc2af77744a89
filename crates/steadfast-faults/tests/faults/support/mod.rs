//! Test support: databases (the test server or a throwaway cluster), worker fleets, and the
//! scenario that starts orchestrations and checks every invariant from the database.
#![allow(dead_code)]

pub mod cluster;
pub mod fleet;
pub mod scenario;

use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::Rng;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

/// The shared test server (`STEADFAST_TEST_DATABASE_URL`).
pub fn test_database_url() -> String {
    std::env::var("STEADFAST_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// `sft_<epoch secs>_fault_<label>_<random>`: the `sft_` prefix and the timestamp let the
/// steadfast-pg tests' stale-schema sweep drop it if a crashed run leaves it behind.
pub fn unique_schema(label: &str) -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let n: u32 = rand::thread_rng().r#gen();
    format!("sft_{secs}_fault_{label}_{n:08x}")
}

/// Named SQL under `tests/sql/`, rendered for one schema.
pub fn sql(text: &str, schema: &str) -> String {
    text.replace("__SCHEMA__", &format!("\"{schema}\""))
}

/// At most two fault scenarios at a time, whatever `--test-threads` says: each starts
/// worker processes (and maybe a cluster), and CI has 2 cores. The limit lives here, not in
/// a separate `cargo test -p` run, so the suite runs in the workspace's one test invocation
/// (a `-p` build resolves features differently and rebuilds the dependencies).
static SCENARIO_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// Hold this for the whole test.
pub async fn scenario_slot() -> tokio::sync::SemaphorePermit<'static> {
    SCENARIO_SLOTS.acquire().await.expect("never closed")
}

/// Application name of the test's own check connections; never terminated by the tests.
pub const CHECK_APPLICATION: &str = "steadfast_fault_check";

/// A small pool for the test's own checks, under [`CHECK_APPLICATION`].
pub async fn check_pool(url: &str) -> PgPool {
    let options = PgConnectOptions::from_str(url)
        .unwrap()
        .application_name(CHECK_APPLICATION);
    PgPoolOptions::new()
        .min_connections(1)
        .max_connections(2)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options)
        .await
        .expect("test database reachable (set STEADFAST_TEST_DATABASE_URL)")
}

/// Poll `condition` every 20 ms until it holds; panics with `what` after `timeout`.
pub async fn wait_until<F, Fut>(what: &str, timeout: Duration, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    while !condition().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
