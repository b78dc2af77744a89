//! Workers whose clocks are 60 s ahead and 60 s behind (libfaketime), one of them killed
//! mid-activity: leases are judged by the database clock, so nothing is stolen early or
//! held late. Durable timers are left out: a timer's fire time comes from the clock of
//! the worker that scheduled it (docs/guarantees.md), so a +60 s worker delays it by 60 s.

use std::sync::atomic::Ordering;
use std::time::Duration;

use steadfast_faults::workload::Kind;

use crate::support::fleet::{Fleet, Window, WorkerSpec};
use crate::support::scenario::Scenario;
use crate::support::{check_pool, sql, test_database_url, unique_schema};

const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

fn skewed(mut spec: WorkerSpec, offset: &str) -> WorkerSpec {
    spec.env = vec![
        ("LD_PRELOAD".into(), FAKETIME_LIB.into()),
        ("FAKETIME".into(), offset.into()),
        ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
    ];
    spec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_with_clocks_60_s_ahead_and_behind() {
    let _slot = crate::support::scenario_slot().await;
    assert!(
        std::path::Path::new(FAKETIME_LIB).exists(),
        "libfaketime is required (apt-get install faketime; .ci/run installs it)"
    );
    let url = test_database_url();
    let schema = unique_schema("skew");
    let mut s = Scenario::new(&url, &schema, 5).await;
    let mut fleet = Fleet::new(&url, &schema);
    let check = check_pool(&url).await;
    let db_clock = sql(include_str!("../sql/db_clock_ms.sql"), "");
    for (offset, sign) in [("+60s", 1.0), ("-60s", -1.0)] {
        let i = fleet.add(skewed(s.worker("listen", &[]), offset)).await;
        let db_now_ms: f64 = sqlx::query_scalar(&db_clock)
            .fetch_one(&check)
            .await
            .unwrap();
        let worker_ms = fleet.workers[i].marks.clock_ms.load(Ordering::SeqCst) as f64;
        let skew = worker_ms - db_now_ms;
        // The worker read its clock just before it said READY, a little before the
        // database read its own: allow for that.
        assert!(
            sign * skew > 50_000.0 && sign * skew < 70_000.0,
            "worker {offset} is not skewed as asked: {skew} ms"
        );
    }
    check.close().await;

    let kinds = [
        Kind::Chain,
        Kind::FanOut,
        Kind::Long,
        Kind::Panics,
        Kind::Poisoned,
    ];
    s.start(&kinds, 2).await;
    let victim = fleet
        .find_in(Window::MidActivity, Duration::from_secs(60))
        .await
        .expect("a skewed worker inside an activity");
    fleet.kill9_and_replace(victim).await;
    s.start(&kinds, 1).await;
    let report = s.verify(&mut fleet, true).await;
    println!("clock skew ±60 s: {report:?}");
}
