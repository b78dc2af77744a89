//! Closed-loop load: keep `in_flight` instances of an orchestration (`Trivial` unless told)
//! running; every completion (reported by the probe) starts the next one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use std::time::Duration;

use duroxide::Client;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::common::TRIVIAL;
use crate::probe::ProbeStats;

/// What a closed loop completed in its measured window.
pub struct Window {
    /// The window's start on the probe's clock (ms).
    pub from_ms: u32,
    pub completed: usize,
    pub secs: f64,
}

pub struct ClosedLoop {
    stop: Arc<AtomicBool>,
    pub start_errors: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

impl ClosedLoop {
    pub fn spawn(
        client: Arc<Client>,
        prefix: String,
        in_flight: usize,
        completions: mpsc::UnboundedReceiver<String>,
    ) -> Self {
        Self::spawn_of(client, prefix, in_flight, completions, TRIVIAL, |_| {
            "x".into()
        })
    }

    /// As [`spawn`](Self::spawn), starting `orchestration` with `input(n)` for the n-th
    /// instance.
    pub fn spawn_of(
        client: Arc<Client>,
        prefix: String,
        in_flight: usize,
        mut completions: mpsc::UnboundedReceiver<String>,
        orchestration: &'static str,
        input: fn(u64) -> String,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let started = Arc::new(AtomicU64::new(0));
        let start_errors = Arc::new(AtomicU64::new(0));
        let task = {
            let stop = stop.clone();
            let started = started.clone();
            let start_errors = start_errors.clone();
            tokio::spawn(async move {
                let launch = |n: u64| {
                    let client = client.clone();
                    let id = format!("{prefix}-{n}");
                    let start_errors = start_errors.clone();
                    tokio::spawn(async move {
                        let started = client.start_orchestration(&id, orchestration, input(n));
                        if started.await.is_err() {
                            start_errors.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                };
                for _ in 0..in_flight {
                    launch(started.fetch_add(1, Ordering::Relaxed));
                }
                while let Some(id) = completions.recv().await {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if id.starts_with(&prefix) {
                        launch(started.fetch_add(1, Ordering::Relaxed));
                    }
                }
            })
        };
        Self {
            stop,
            start_errors,
            task,
        }
    }

    /// Let the loop run through `warmup` and `window` from `t0` (when it was spawned, on
    /// `stats`' clock), stop it, and count the completions within the window.
    pub async fn run_window(
        &self,
        stats: &ProbeStats,
        t0: u32,
        warmup: Duration,
        window: Duration,
    ) -> Window {
        tokio::time::sleep(warmup + window).await;
        let end = stats.now_ms();
        self.stop();
        let from_ms = t0 + warmup.as_millis() as u32;
        Window {
            from_ms,
            completed: stats.completions_between(from_ms, end),
            secs: (end - from_ms) as f64 / 1000.0,
        }
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.task.abort();
    }
}
