//! `close` leaves no connection open, however its statements' connections were returning
//! to the pool when it ran (sqlx's own close can miss one whose return races it).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::Harness;
use duroxide::providers::ProviderAdmin;

const ROUNDS: usize = 20;
const CONCURRENT_READS: usize = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_leaves_no_connection_open() {
    let h = Harness::new("close", |_| {}).await;
    for round in 0..ROUNDS {
        let application = common::application_name(&format!("close_{round}_{}", h.schema));
        let p = common::provider_with(common::named_options(&h.schema, &application)).await;
        // Statements whose connections are on their way back to the pool as close runs.
        let reads = (0..CONCURRENT_READS).map(|_| p.list_instances());
        for listed in futures_util::future::join_all(reads).await {
            listed.unwrap();
        }
        p.close().await;

        common::wait_connections_gone(&application, Duration::from_secs(10)).await;
        // The provider stays alive past its close, as a caller's would.
        drop(p);
    }
    h.drop().await;
}
