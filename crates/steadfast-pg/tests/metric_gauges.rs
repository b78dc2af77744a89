//! The queue gauges are read from the database when metrics are scraped. Those reads count
//! every queued message and dead letter, so scrapes must not multiply them: one read runs
//! at a time, shared by concurrent scrapes, and a read less than
//! `steadfast_pg::metrics::GAUGES_MIN_AGE` old is not repeated.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::harness::Harness;

/// The application name of this test's scraping providers' connections.
fn scraper_application(h: &Harness) -> String {
    common::application_name(&format!("gauges_{}", h.schema))
}

/// Scans of the dead-letter table so far (each gauge read makes one), from the server's
/// counters: close the provider whose reads should count first. A backend sends its
/// counters as it exits, so this first waits until every scraper connection is gone.
async fn dead_letter_scans(h: &Harness) -> i64 {
    common::wait_connections_gone(&scraper_application(h), Duration::from_secs(30)).await;
    let admin = common::admin_pool().await;
    let n: i64 = sqlx::query_scalar(
        "SELECT (COALESCE(seq_scan, 0) + COALESCE(idx_scan, 0))::int8
         FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'dead_letters'",
    )
    .persistent(false)
    .bind(&h.schema)
    .fetch_one(&admin)
    .await
    .unwrap();
    admin.close().await;
    n
}

async fn scraper(h: &Harness) -> std::sync::Arc<steadfast_pg::PostgresProvider> {
    common::provider_with(common::named_options(&h.schema, &scraper_application(h))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scrapes_share_one_gauge_read_a_second() {
    let h = Harness::new("metric_gauges", |_| {}).await;

    // What one read costs.
    let before = dead_letter_scans(&h).await;
    let one = scraper(&h).await;
    one.refresh_metric_gauges().await.unwrap();
    one.close().await;
    let per_read = dead_letter_scans(&h).await - before;
    assert!(per_read >= 1, "a gauge read did not scan the dead letters");

    // 20 concurrent scrapes, then 10 more in a loop, all within the minimum age; then one
    // past it, which reads again.
    let before = dead_letter_scans(&h).await;
    let many = scraper(&h).await;
    let burst = (0..20).map(|_| many.refresh_metric_gauges());
    for result in futures_util::future::join_all(burst).await {
        result.unwrap();
    }
    for _ in 0..10 {
        many.refresh_metric_gauges().await.unwrap();
    }
    tokio::time::sleep(steadfast_pg::metrics::GAUGES_MIN_AGE + Duration::from_millis(100)).await;
    many.refresh_metric_gauges().await.unwrap();
    many.close().await;
    let reads = (dead_letter_scans(&h).await - before) / per_read;
    assert_eq!(
        reads, 2,
        "31 scrapes, the last past the minimum age, read the gauges {reads} times"
    );
    h.drop().await;
}
