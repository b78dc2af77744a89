//! A worker process for the fault suite: the duroxide runtime on steadfast-pg running the
//! [`steadfast_faults::workload`]. Runs until killed, or until stdin says `stop` or closes
//! (then shuts the runtime down gracefully). Exit status 2 on bad arguments or when the
//! provider cannot be set up.

use std::io::BufRead;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use duroxide::RuntimeOptions;
use duroxide::providers::Provider;
use duroxide::runtime::{Runtime, UnregisteredBackoffConfig};
use steadfast_faults::config::{USAGE, WorkerConfig};
use steadfast_faults::workload::{self, MARK_CLOCK, MARK_READY};
use steadfast_pg::PostgresProvider;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    if std::env::args().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let config = match WorkerConfig::parse(std::env::args().skip(1)) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fault-worker: {e:#}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("tokio runtime");
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fault-worker: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(config: WorkerConfig) -> anyhow::Result<()> {
    // The server may be restarting when a test (re)starts this worker: retry set-up.
    let provider = {
        let mut tries = 0;
        loop {
            match PostgresProvider::connect_with_options(config.provider_options()).await {
                Ok(p) => break Arc::new(p),
                Err(e) if tries < 60 => {
                    tries += 1;
                    eprintln!("fault-worker: provider not ready ({e}); retrying");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
    };
    let options = RuntimeOptions {
        max_attempts: config.max_attempts,
        orchestration_concurrency: config.orchestration_concurrency,
        worker_concurrency: config.worker_concurrency,
        orchestrator_lock_timeout: config.orchestrator_lock,
        worker_lock_timeout: config.worker_lock,
        dispatcher_min_poll_interval: Duration::from_millis(50),
        dispatcher_long_poll_timeout: Duration::from_secs(2),
        unregistered_backoff: UnregisteredBackoffConfig {
            base_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(200),
        },
        ..RuntimeOptions::default()
    };
    let store: Arc<dyn Provider> = provider.clone();
    let runtime = Runtime::start_with_options(
        store,
        workload::activities(config.pace),
        workload::orchestrations(config.pace),
        options,
    )
    .await;
    // The clock right before READY, so the test can compare it with the database clock.
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    println!("{MARK_CLOCK} {now_ms}");
    println!("{MARK_READY}");

    // stdin is read on a plain thread: `stop` or end of input ends the worker.
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(l) if l.trim() == "stop" => break,
                Ok(_) => continue,
                Err(_) => break,
            }
        }
        let _ = stop_tx.send(());
    });
    let _ = stop_rx.await;
    runtime.shutdown(Some(5_000)).await;
    provider.close().await;
    Ok(())
}
