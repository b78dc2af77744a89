//! `kill -9` of workers while they hold a lease: inside an activity and inside a turn,
//! repeatedly, each killed worker replaced by a fresh process.

use std::time::Duration;

use steadfast_faults::workload::Kind;

use crate::support::fleet::{Fleet, Window};
use crate::support::scenario::Scenario;
use crate::support::{test_database_url, unique_schema};

const ROUNDS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_activity_and_mid_turn_repeatedly() {
    let _slot = crate::support::scenario_slot().await;
    let url = test_database_url();
    let schema = unique_schema("kill9");
    let mut s = Scenario::new(&url, &schema, 5).await;
    let mut fleet = Fleet::new(&url, &schema);
    for _ in 0..3 {
        fleet.add(s.worker("listen", &[])).await;
    }
    s.start(&Kind::ALL, 2).await;
    for round in 0..ROUNDS {
        // Alternate the windows; a new Chain per round keeps both kinds of window coming.
        let window = if round % 2 == 0 {
            Window::MidActivity
        } else {
            Window::MidTurn
        };
        s.start(&[Kind::Chain, Kind::FanOut], 1).await;
        let victim = fleet
            .find_in(window, Duration::from_secs(60))
            .await
            .unwrap_or_else(|| panic!("round {round}: no worker entered {window:?}"));
        fleet.kill9_and_replace(victim).await;
    }
    let report = s.verify(&mut fleet, true).await;
    println!("kill -9 ({ROUNDS} kills): {report:?}");
}
