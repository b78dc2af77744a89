//! Closed-loop load: keep `in_flight` instances of `Trivial` running; every completion
//! (reported by the probe) starts the next one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use duroxide::Client;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::common::TRIVIAL;

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
        mut completions: mpsc::UnboundedReceiver<String>,
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
                        if client.start_orchestration(&id, TRIVIAL, "x").await.is_err() {
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

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.task.abort();
    }
}
