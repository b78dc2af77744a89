//! The process's metrics recorder: duroxide's metrics and steadfast-pg's, rendered as
//! Prometheus text. Installed by the first `Runtime`; every runtime of the process then
//! records into it (a `metrics` recorder is process-wide), so a scrape covers them all.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Durations in seconds: 1 ms to 1 minute.
const SECONDS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];
/// Durations in milliseconds (duroxide's dispatcher histograms): 1 ms to 1 minute.
const MILLIS: &[f64] = &[
    1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2500.0, 5000.0, 10000.0, 30000.0,
    60000.0,
];
/// Everything else (turns per orchestration, history sizes): counts.
const COUNTS: &[f64] = &[
    1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 5000.0, 10000.0,
];

static HANDLE: OnceLock<Result<PrometheusHandle, String>> = OnceLock::new();

/// The installed recorder's handle (installing it on first use), or why there is none.
pub(crate) fn handle() -> Result<&'static PrometheusHandle, &'static str> {
    HANDLE.get_or_init(install).as_ref().map_err(String::as_str)
}

fn install() -> Result<PrometheusHandle, String> {
    let recorder = PrometheusBuilder::new()
        .set_buckets(COUNTS)
        .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS))
        .and_then(|b| b.set_buckets_for_metric(Matcher::Suffix("_ms".into()), MILLIS))
        .map_err(|e| format!("metrics buckets: {e}"))?
        .build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder)
        .map_err(|_| "another metrics recorder was installed in this addon first".to_string())?;
    steadfast_pg::metrics::describe();
    Ok(handle)
}
