//! The PostgreSQL server restarted (`pg_ctl restart -m fast`) and crashed
//! (`pg_ctl stop -m immediate`, down for a second) while workers run, on a throwaway
//! cluster. One worker long-polls with LISTEN, the other runs session-free.

use std::sync::Arc;
use std::time::Duration;

use steadfast_faults::workload::Kind;

use crate::support::cluster::start_cluster;
use crate::support::fleet::{Fleet, Window};
use crate::support::scenario::Scenario;
use crate::support::unique_schema;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_restarted_and_crashed_mid_run() {
    let _slot = crate::support::scenario_slot().await;
    let cluster = Arc::new(start_cluster(100).await);
    let url = cluster.url();
    let schema = unique_schema("restart");
    let mut s = Scenario::new(&url, &schema, 5).await;
    let mut fleet = Fleet::new(&url, &schema);
    for polling in ["listen", "session-free"] {
        fleet.add(s.worker(polling, &[])).await;
    }

    s.start(&Kind::ALL, 2).await;
    fleet
        .find_in(Window::MidActivity, Duration::from_secs(60))
        .await
        .expect("work in flight before the restart");
    let c = cluster.clone();
    tokio::task::spawn_blocking(move || c.restart())
        .await
        .unwrap();

    s.start(&Kind::ALL, 1).await;
    fleet
        .find_in(Window::MidActivity, Duration::from_secs(60))
        .await
        .expect("work in flight before the crash");
    let c = cluster.clone();
    tokio::task::spawn_blocking(move || c.crash_and_start(Duration::from_secs(1)))
        .await
        .unwrap();

    s.start(&Kind::ALL, 1).await;
    let report = s.verify(&mut fleet, false).await;
    println!("server restart + crash: {report:?}");
}
