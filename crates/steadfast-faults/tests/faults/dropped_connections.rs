//! Every connection the providers hold is terminated (`pg_terminate_backend`) every
//! 500 ms while the workload runs, on a throwaway cluster (so no other client is hit).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use steadfast_faults::workload::Kind;

use crate::support::cluster::start_cluster;
use crate::support::fleet::Fleet;
use crate::support::scenario::Scenario;
use crate::support::{check_pool, sql, unique_schema, wait_until};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_terminated_every_500_ms() {
    let _slot = crate::support::scenario_slot().await;
    let cluster = start_cluster(100).await;
    let url = cluster.url();
    let schema = unique_schema("terminate");
    let mut s = Scenario::new(&url, &schema, 5).await;
    let mut fleet = Fleet::new(&url, &schema);
    for polling in ["listen", "listen", "session-free"] {
        fleet.add(s.worker(polling, &[])).await;
    }

    let stop = Arc::new(AtomicBool::new(false));
    let terminated = Arc::new(AtomicI64::new(0));
    let terminator = {
        let (stop, terminated) = (stop.clone(), terminated.clone());
        let pool = check_pool(&url).await;
        let query = sql(include_str!("../sql/terminate_provider_backends.sql"), "");
        tokio::spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                if let Ok(n) = sqlx::query_scalar::<_, i64>(&query).fetch_one(&pool).await {
                    terminated.fetch_add(n, Ordering::SeqCst);
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        })
    };

    for _ in 0..3 {
        s.start(&Kind::ALL, 1).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    // Keep terminating until every instance has ended (bounded), then check.
    let total = 3 * Kind::ALL.len();
    wait_until(
        "all instances terminal under terminations",
        Duration::from_secs(120),
        || {
            let s = &s;
            async move { s.terminal_count().await == total }
        },
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    terminator.await.unwrap();
    assert!(
        terminated.load(Ordering::SeqCst) > 10,
        "too few connections were terminated to mean anything"
    );

    let report = s.verify(&mut fleet, false).await;
    println!(
        "terminated {} connections: {report:?}",
        terminated.load(Ordering::SeqCst)
    );
}
