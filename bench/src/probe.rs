//! A measuring `Provider` wrapper, the same for both providers under test.
//!
//! It delegates every call and records:
//! - the wall time of every `fetch_orchestration_item` call (excluding the injected sleep
//!   below) and whether it returned an item;
//! - errors from `ack_orchestration_item` (an ack the provider refused: dead lease, etc.);
//! - orchestration completions (an ack that committed `status = Completed`), sent on a
//!   channel so closed-loop drivers can start the next instance;
//! - how many messages each successful ack consumed.
//!
//! For the livelock scenario it also reproduces "fails on every turn" the way
//! `crates/steadfast-pg/tests/livelock_regression.rs` does: when a fetch returns the hot
//! instance, the wrapper sleeps `lock_timeout + overrun` before handing the item to the
//! runtime, so every ack of that instance arrives with a dead lease.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use duroxide::Event;
use duroxide::providers::{
    DispatcherCapabilityFilter, ExecutionMetadata, OrchestrationItem, Provider, ProviderError,
    ScheduledActivityIdentifier, SessionFetchConfig, TagFilter, WorkItem,
};
use steadfast_pg::ProviderLayer;
use tokio::sync::mpsc;

/// One `fetch_orchestration_item` call.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct FetchSample {
    /// Milliseconds since the probe was created, at the start of the call.
    pub at_ms: u32,
    /// Wall time of the provider's fetch, microseconds.
    pub micros: u32,
    /// The call returned an item.
    pub found: bool,
    /// The call returned an error.
    pub error: bool,
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct ProbeCounters {
    pub ack_ok: AtomicU64,
    pub ack_rejected: AtomicU64,
    pub hot_ack_rejected: AtomicU64,
    pub messages_acked: AtomicU64,
    pub completed: AtomicU64,
    pub hot_fetches: AtomicU32,
    pub hot_max_attempt: AtomicU32,
    pub worker_fetch_found: AtomicU64,
    pub worker_fetch_empty: AtomicU64,
}

pub struct ProbeStats {
    pub started: Instant,
    /// Wall clock at `started`, ms since the epoch: lines up samples taken in other processes.
    pub started_epoch_ms: u64,
    pub counters: ProbeCounters,
    fetches: Mutex<Vec<FetchSample>>,
    completions_ms: Mutex<Vec<u32>>,
    /// (ms since start, attempt_count) of every hand-out of the hot instance.
    hot_handouts: Mutex<Vec<(u32, u32)>>,
}

impl Default for ProbeStats {
    fn default() -> Self {
        Self::new()
    }
}

impl ProbeStats {
    pub fn new() -> Self {
        Self {
            started: Instant::now(),
            started_epoch_ms: crate::common::epoch_ms(),
            counters: ProbeCounters::default(),
            fetches: Mutex::new(Vec::with_capacity(1 << 16)),
            completions_ms: Mutex::new(Vec::with_capacity(1 << 14)),
            hot_handouts: Mutex::new(Vec::new()),
        }
    }

    pub fn now_ms(&self) -> u32 {
        self.started.elapsed().as_millis() as u32
    }

    pub fn fetches(&self) -> Vec<FetchSample> {
        self.fetches.lock().unwrap().clone()
    }

    pub fn fetches_since(&self, from_ms: u32) -> Vec<FetchSample> {
        self.fetches
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.at_ms >= from_ms)
            .copied()
            .collect()
    }

    pub fn completions_between(&self, from_ms: u32, to_ms: u32) -> usize {
        self.completions_ms
            .lock()
            .unwrap()
            .iter()
            .filter(|&&t| t >= from_ms && t < to_ms)
            .count()
    }

    pub fn hot_handouts(&self) -> Vec<(u32, u32)> {
        self.hot_handouts.lock().unwrap().clone()
    }

    /// An orchestration completed (its completing ack committed) now.
    pub fn record_completion(&self) {
        self.counters.completed.fetch_add(1, Ordering::Relaxed);
        self.completions_ms.lock().unwrap().push(self.now_ms());
    }

    /// The hot instance was handed out now, with this attempt count.
    pub fn record_hot_handout(&self, attempt: u32) {
        let c = &self.counters;
        c.hot_fetches.fetch_add(1, Ordering::Relaxed);
        c.hot_max_attempt.fetch_max(attempt, Ordering::Relaxed);
        self.hot_handouts
            .lock()
            .unwrap()
            .push((self.now_ms(), attempt));
    }

    /// Adds samples taken by another process's probe whose clock started `offset_ms` after
    /// this one's (negative: before). Samples that would fall before this clock start at 0.
    pub fn merge_remote(
        &self,
        offset_ms: i64,
        fetches: &[FetchSample],
        hot_handouts: &[(u32, u32)],
    ) {
        let shift = |t: u32| (t as i64 + offset_ms).clamp(0, u32::MAX as i64) as u32;
        let mut mine = self.fetches.lock().unwrap();
        mine.extend(fetches.iter().map(|s| FetchSample {
            at_ms: shift(s.at_ms),
            ..*s
        }));
        let mut hot = self.hot_handouts.lock().unwrap();
        hot.extend(hot_handouts.iter().map(|&(t, a)| (shift(t), a)));
        hot.sort_unstable();
    }
}

pub struct Probe {
    inner: Arc<dyn Provider>,
    hot: Option<String>,
    overrun: Duration,
    pub stats: Arc<ProbeStats>,
    /// lock token -> (instance, number of messages in the item)
    tokens: Mutex<HashMap<String, (String, usize)>>,
    completions: Option<mpsc::UnboundedSender<String>>,
}

impl Probe {
    /// A probe on `provider` with no hot instance, as a runtime's provider, and the
    /// receiver of its completion reports (what a closed loop starts the next instance from).
    pub fn reporting(
        provider: Arc<dyn Provider>,
    ) -> (
        Arc<steadfast_pg::Layered<Probe>>,
        mpsc::UnboundedReceiver<String>,
    ) {
        let (tx, rx) = mpsc::unbounded_channel();
        let probe = Probe::new(provider, None, Duration::ZERO, Some(tx));
        (Arc::new(steadfast_pg::Layered(probe)), rx)
    }

    /// `hot`: the instance whose fetches are delayed past their lease by `overrun`.
    /// `completions`: receives the id of every instance whose completing ack committed.
    pub fn new(
        inner: Arc<dyn Provider>,
        hot: Option<String>,
        overrun: Duration,
        completions: Option<mpsc::UnboundedSender<String>>,
    ) -> Self {
        Self {
            inner,
            hot,
            overrun,
            stats: Arc::new(ProbeStats::new()),
            tokens: Mutex::new(HashMap::new()),
            completions,
        }
    }
}

#[async_trait::async_trait]
impl ProviderLayer for Probe {
    fn inner(&self) -> &dyn Provider {
        &*self.inner
    }

    async fn fetch_orchestration_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        filter: Option<&DispatcherCapabilityFilter>,
    ) -> Result<Option<(OrchestrationItem, String, u32)>, ProviderError> {
        let at_ms = self.stats.now_ms();
        let t0 = Instant::now();
        let fetched = self
            .inner
            .fetch_orchestration_item(lock_timeout, poll_timeout, filter)
            .await;
        let micros = t0.elapsed().as_micros().min(u32::MAX as u128) as u32;
        self.stats.fetches.lock().unwrap().push(FetchSample {
            at_ms,
            micros,
            found: matches!(fetched, Ok(Some(_))),
            error: fetched.is_err(),
        });
        let fetched = fetched?;
        if let Some((item, token, attempt)) = &fetched {
            self.tokens
                .lock()
                .unwrap()
                .insert(token.clone(), (item.instance.clone(), item.messages.len()));
            if self.hot.as_deref() == Some(item.instance.as_str()) {
                self.stats.record_hot_handout(*attempt);
                tokio::time::sleep(lock_timeout + self.overrun).await;
            }
        }
        Ok(fetched)
    }

    async fn ack_orchestration_item(
        &self,
        lock_token: &str,
        execution_id: u64,
        history_delta: Vec<Event>,
        worker_items: Vec<WorkItem>,
        orchestrator_items: Vec<WorkItem>,
        metadata: ExecutionMetadata,
        cancelled_activities: Vec<ScheduledActivityIdentifier>,
    ) -> Result<(), ProviderError> {
        let completed = metadata.status.as_deref() == Some("Completed");
        let result = self
            .inner
            .ack_orchestration_item(
                lock_token,
                execution_id,
                history_delta,
                worker_items,
                orchestrator_items,
                metadata,
                cancelled_activities,
            )
            .await;
        let entry = self.tokens.lock().unwrap().remove(lock_token);
        let c = &self.stats.counters;
        match &result {
            Ok(()) => {
                c.ack_ok.fetch_add(1, Ordering::Relaxed);
                if let Some((instance, messages)) = entry {
                    c.messages_acked
                        .fetch_add(messages as u64, Ordering::Relaxed);
                    if completed {
                        self.stats.record_completion();
                        if let Some(tx) = &self.completions {
                            let _ = tx.send(instance);
                        }
                    }
                }
            }
            Err(_) => {
                c.ack_rejected.fetch_add(1, Ordering::Relaxed);
                if let Some((instance, _)) = &entry
                    && self.hot.as_deref() == Some(instance.as_str())
                {
                    c.hot_ack_rejected.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        result
    }

    async fn abandon_orchestration_item(
        &self,
        lock_token: &str,
        delay: Option<Duration>,
        ignore_attempt: bool,
    ) -> Result<(), ProviderError> {
        self.tokens.lock().unwrap().remove(lock_token);
        self.inner
            .abandon_orchestration_item(lock_token, delay, ignore_attempt)
            .await
    }

    async fn fetch_work_item(
        &self,
        lock_timeout: Duration,
        poll_timeout: Duration,
        session: Option<&SessionFetchConfig>,
        tag_filter: &TagFilter,
    ) -> Result<Option<(WorkItem, String, u32)>, ProviderError> {
        let r = self
            .inner
            .fetch_work_item(lock_timeout, poll_timeout, session, tag_filter)
            .await;
        let c = &self.stats.counters;
        match &r {
            Ok(Some(_)) => c.worker_fetch_found.fetch_add(1, Ordering::Relaxed),
            _ => c.worker_fetch_empty.fetch_add(1, Ordering::Relaxed),
        };
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_ms: u32, micros: u32) -> FetchSample {
        FetchSample {
            at_ms,
            micros,
            found: true,
            error: false,
        }
    }

    #[test]
    fn remote_samples_land_on_this_clock() {
        let stats = ProbeStats::new();
        // A child whose clock started 1.5 s after ours, and one that started 0.2 s before.
        stats.merge_remote(1500, &[sample(100, 7)], &[(2000, 3)]);
        stats.merge_remote(-200, &[sample(50, 9), sample(1000, 11)], &[(300, 1)]);
        let mut at: Vec<(u32, u32)> = stats
            .fetches()
            .iter()
            .map(|s| (s.at_ms, s.micros))
            .collect();
        at.sort_unstable();
        // 50 - 200 would be before our clock started: it is kept, at 0.
        assert_eq!(at, vec![(0, 9), (800, 11), (1600, 7)]);
        assert_eq!(stats.hot_handouts(), vec![(100, 1), (3500, 3)]);
        assert_eq!(stats.fetches_since(800).len(), 2);
    }

    #[test]
    fn recorded_completions_and_handouts_update_the_counters() {
        let stats = ProbeStats::new();
        stats.record_completion();
        stats.record_completion();
        stats.record_hot_handout(4);
        stats.record_hot_handout(2);
        let c = &stats.counters;
        assert_eq!(c.completed.load(Ordering::Relaxed), 2);
        assert_eq!(c.hot_fetches.load(Ordering::Relaxed), 2);
        assert_eq!(c.hot_max_attempt.load(Ordering::Relaxed), 4);
        assert_eq!(stats.completions_between(0, u32::MAX), 2);
    }

    #[test]
    fn counters_survive_the_child_report_round_trip() {
        let c = ProbeCounters::default();
        c.ack_rejected.store(20, Ordering::Relaxed);
        c.hot_max_attempt.store(11, Ordering::Relaxed);
        let copy: ProbeCounters =
            serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(copy.ack_rejected.load(Ordering::Relaxed), 20);
        assert_eq!(copy.hot_max_attempt.load(Ordering::Relaxed), 11);
    }
}
