//! The runtime: registrations, start/shutdown, and the synchronous context calls JS makes
//! while a generator turn or an activity is running.
//!
//! With a PostgreSQL provider the runtime connects its **own** steadfast-pg provider at
//! `start()`: same URL, schema and pool settings as the `PostgresProvider` it was given,
//! with the runtime's claim options merged in and `claim.max_attempts` set to the runtime's
//! `maxAttempts` (the attempt ceiling). Claim options only bound the runtime's fetches, so
//! they live in `RuntimeOptions`; clients keep using the original pool. Diagnostics come
//! from that runtime provider.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use duroxide::runtime::registry::ActivityRegistry;
use duroxide::runtime::{self, RuntimeOptions};
use duroxide::{ActivityContext, OrchestrationContext, OrchestrationRegistry};
use napi::Status;
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use semver::Version;
use steadfast_pg::Layered;
use tokio::task::JoinHandle;

use crate::activity::{self, ActivityCallback, ActivityCalls};
use crate::client::NativeClient;
use crate::diagnostics::{
    DiagnosticCallback, DiagnosticSink, ObservedProvider, Observers, forward_pg,
};
use crate::errors::{Code, error, guard};
use crate::event_loop::EventLoopWatch;
use crate::generator::{self, Driver, DriverCallback};
use crate::lifecycle::Lifecycle;
use crate::log_output::LogCallback;
use crate::options::{ClaimOverrides, NativeRuntimeOptions, build, event_loop_stall};
use crate::providers::{Backend, NativeProvider, connect};
use crate::retried_turns::RetriedTurns;

/// Names reserved by duroxide for its built-in activities.
const RESERVED_PREFIX: &str = "__duroxide_syscall:";

enum Phase {
    Configuring,
    Starting,
    Running(Running),
    Stopping,
    Stopped,
}

struct Running {
    runtime: Arc<runtime::Runtime>,
    pg: Option<Arc<steadfast_pg::PostgresProvider>>,
    forwarder: Option<JoinHandle<()>>,
}

struct State {
    phase: Phase,
    activities: Vec<(String, Arc<ActivityCallback>)>,
    orchestrations: Vec<(String, String)>,
    diagnostics: Option<Arc<DiagnosticCallback>>,
    logger: Option<Arc<LogCallback>>,
}

/// Counters since start (duroxide's `MetricsSnapshot`).
#[napi(object)]
pub struct NativeMetricsSnapshot {
    pub orch_starts: f64,
    pub orch_completions: f64,
    pub orch_failures: f64,
    pub orch_application_errors: f64,
    pub orch_infrastructure_errors: f64,
    pub orch_configuration_errors: f64,
    pub orch_poison: f64,
    pub activity_success: f64,
    pub activity_app_errors: f64,
    pub activity_infra_errors: f64,
    pub activity_config_errors: f64,
    pub activity_poison: f64,
    pub orch_dispatcher_items_fetched: f64,
    pub worker_dispatcher_items_fetched: f64,
    pub orch_continue_as_new: f64,
    pub suborchestration_calls: f64,
    pub provider_errors: f64,
}

/// A duroxide runtime whose orchestrations and activities are JS functions.
#[napi]
pub struct NativeRuntime {
    backend: Backend,
    options: RuntimeOptions,
    claim: ClaimOverrides,
    state: Mutex<State>,
    driver: Mutex<Option<Arc<Driver>>>,
    calls: Arc<ActivityCalls>,
    watch: Arc<EventLoopWatch>,
    retried: Arc<RetriedTurns>,
    lifecycle: Arc<Lifecycle>,
    log_filter: Option<String>,
}

impl NativeRuntime {
    fn observers(&self) -> Observers {
        Observers {
            watch: self.watch.clone(),
            retried: self.retried.clone(),
            lifecycle: self.lifecycle.clone(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn driver(&self) -> Option<Arc<Driver>> {
        self.driver
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn turn(&self, turn: i64) -> napi::Result<OrchestrationContext> {
        self.driver().and_then(|d| d.context(turn)).ok_or_else(|| {
            error(
                Code::InvalidState,
                "orchestration context used outside its turn (only call it synchronously \
                     from the generator)",
            )
        })
    }

    fn activity(&self, id: i64) -> napi::Result<ActivityContext> {
        self.calls.context(id).ok_or_else(|| {
            error(
                Code::InvalidState,
                "activity context used after the activity returned",
            )
        })
    }
}

/// Check orchestration registrations and build duroxide's registry (versions sorted, so
/// duroxide's ascending-order rule can never panic).
fn orchestration_registry(
    driver: Arc<Driver>,
    retried: Arc<RetriedTurns>,
    regs: &[(String, String)],
) -> Result<OrchestrationRegistry, String> {
    let mut by_name: BTreeMap<&str, Vec<Version>> = BTreeMap::new();
    for (name, version) in regs {
        if name.is_empty() {
            return Err("orchestration name must not be empty".into());
        }
        let v = Version::parse(version).map_err(|e| {
            format!("orchestration {name:?}: version {version:?} is not valid semver ({e})")
        })?;
        let versions = by_name.entry(name.as_str()).or_default();
        if versions.contains(&v) {
            return Err(format!(
                "orchestration {name:?} version {v} is registered twice"
            ));
        }
        versions.push(v);
    }
    let mut builder = OrchestrationRegistry::builder();
    for (name, mut versions) in by_name {
        versions.sort();
        for v in versions {
            let d = driver.clone();
            let r = retried.clone();
            builder = builder.register_versioned(name, v.to_string(), move |ctx, input| {
                generator::run(d.clone(), r.clone(), ctx, input)
            });
        }
    }
    builder.build_result()
}

fn activity_registry(
    regs: &[(String, Arc<ActivityCallback>)],
    calls: &Arc<ActivityCalls>,
) -> Result<ActivityRegistry, String> {
    let mut builder = ActivityRegistry::builder();
    for (name, callback) in regs {
        if name.is_empty() || name.starts_with(RESERVED_PREFIX) {
            return Err(format!("activity name {name:?} is empty or reserved"));
        }
        let callback = callback.clone();
        let calls = calls.clone();
        builder = builder.register(name.as_str(), move |ctx, input| {
            activity::run(callback.clone(), calls.clone(), ctx, input)
        });
    }
    builder.build_result()
}

fn metrics(m: runtime::observability::MetricsSnapshot) -> NativeMetricsSnapshot {
    NativeMetricsSnapshot {
        orch_starts: m.orch_starts as f64,
        orch_completions: m.orch_completions as f64,
        orch_failures: m.orch_failures as f64,
        orch_application_errors: m.orch_application_errors as f64,
        orch_infrastructure_errors: m.orch_infrastructure_errors as f64,
        orch_configuration_errors: m.orch_configuration_errors as f64,
        orch_poison: m.orch_poison as f64,
        activity_success: m.activity_success as f64,
        activity_app_errors: m.activity_app_errors as f64,
        activity_infra_errors: m.activity_infra_errors as f64,
        activity_config_errors: m.activity_config_errors as f64,
        activity_poison: m.activity_poison as f64,
        orch_dispatcher_items_fetched: m.orch_dispatcher_items_fetched as f64,
        worker_dispatcher_items_fetched: m.worker_dispatcher_items_fetched as f64,
        orch_continue_as_new: m.orch_continue_as_new as f64,
        suborchestration_calls: m.suborchestration_calls as f64,
        provider_errors: m.provider_errors as f64,
    }
}

#[napi]
impl NativeRuntime {
    /// Options must already be validated by the JS layer; this re-checks what could make
    /// duroxide panic.
    #[napi(constructor)]
    pub fn new(
        provider: &NativeProvider,
        options: Option<NativeRuntimeOptions>,
    ) -> napi::Result<Self> {
        let options = options.unwrap_or_default();
        if let Some(d) = &options.log_filter {
            crate::log_output::logfilter(d).map_err(|e| error(Code::InvalidOptions, e))?;
        }
        let log_filter = options.log_filter.clone();
        let watch = Arc::new(EventLoopWatch::new(event_loop_stall(&options)));
        let (options, claim) = build(&options).map_err(|e| error(Code::InvalidOptions, e))?;
        // Before any dispatcher runs, so the first claims are counted. A failure to install
        // is reported by `metrics_text`; the runtime works without metrics.
        let _ = crate::prometheus::handle();
        Ok(Self {
            backend: provider.backend.clone(),
            options,
            claim,
            state: Mutex::new(State {
                phase: Phase::Configuring,
                activities: Vec::new(),
                orchestrations: Vec::new(),
                diagnostics: None,
                logger: None,
            }),
            driver: Mutex::new(None),
            calls: Arc::new(ActivityCalls::default()),
            watch,
            retried: Arc::default(),
            lifecycle: Arc::default(),
            log_filter,
        })
    }

    /// Install the JS generator driver (once, before `start`).
    #[napi(catch_unwind)]
    pub fn set_orchestration_driver(
        &self,
        driver: ThreadsafeFunction<String, String, String, Status, false, true>,
    ) -> napi::Result<()> {
        let callback: DriverCallback = driver;
        *self.driver.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Arc::new(Driver::new(callback)));
        Ok(())
    }

    /// Install the diagnostics listener (before `start`).
    #[napi(catch_unwind)]
    pub fn set_diagnostic_listener(
        &self,
        listener: ThreadsafeFunction<String, (), String, Status, false, true>,
    ) -> napi::Result<()> {
        let mut state = self.lock();
        if !matches!(state.phase, Phase::Configuring) {
            return Err(error(Code::InvalidState, "runtime already started"));
        }
        state.diagnostics = Some(Arc::new(listener));
        Ok(())
    }

    /// Send the process's tracing records to this JS logger from `start` on (`log_output.rs`).
    #[napi]
    pub fn set_logger(
        &self,
        logger: ThreadsafeFunction<String, (), String, Status, false, true>,
    ) -> napi::Result<()> {
        let mut state = self.lock();
        if !matches!(state.phase, Phase::Configuring) {
            return Err(error(Code::InvalidState, "runtime already started"));
        }
        state.logger = Some(Arc::new(logger));
        Ok(())
    }

    /// Whether JS listens for lifecycle events (`lifecycle.rs`); may change at any time.
    #[napi(catch_unwind)]
    pub fn set_lifecycle_events(&self, on: bool) {
        self.lifecycle.set_wanted(on);
    }

    #[napi(catch_unwind)]
    pub fn register_activity(
        &self,
        name: String,
        callback: ThreadsafeFunction<String, Promise<String>, String, Status, false, true>,
    ) -> napi::Result<()> {
        let mut state = self.lock();
        if !matches!(state.phase, Phase::Configuring) {
            return Err(error(
                Code::InvalidState,
                "activities must be registered before start()",
            ));
        }
        if state.activities.iter().any(|(n, _)| *n == name) {
            return Err(error(
                Code::Registration,
                format!("activity {name:?} is already registered"),
            ));
        }
        state.activities.push((name, Arc::new(callback)));
        Ok(())
    }

    /// Register an orchestration name at `version` (plain registrations use `1.0.0`).
    #[napi(catch_unwind)]
    pub fn register_orchestration(&self, name: String, version: String) -> napi::Result<()> {
        let mut state = self.lock();
        if !matches!(state.phase, Phase::Configuring) {
            return Err(error(
                Code::InvalidState,
                "orchestrations must be registered before start()",
            ));
        }
        state.orchestrations.push((name, version));
        Ok(())
    }

    /// The JS event loop answered (called from a timer while running). Returns the JSON
    /// `eventLoopStalled` report when this ends a stall that refused work.
    #[napi(catch_unwind)]
    pub fn heartbeat(&self) -> Option<String> {
        let report = self.watch.beat()?;
        serde_json::to_string(&report).ok()
    }

    /// Build registries and start the dispatchers. Resolves once they run.
    #[napi]
    pub async fn start(&self) -> napi::Result<()> {
        let (activities, orchestrations, diagnostics, logger) = {
            let mut state = self.lock();
            match state.phase {
                Phase::Configuring => {}
                Phase::Starting | Phase::Running(_) => {
                    return Err(error(Code::InvalidState, "runtime already started"));
                }
                Phase::Stopping | Phase::Stopped => {
                    return Err(error(
                        Code::InvalidState,
                        "runtime was shut down; create a new Runtime",
                    ));
                }
            }
            state.phase = Phase::Starting;
            (
                state.activities.clone(),
                state.orchestrations.clone(),
                state.diagnostics.clone(),
                state.logger.clone(),
            )
        };
        let result = match crate::log_output::install(
            logger,
            &self.options.observability,
            self.log_filter.as_deref(),
        ) {
            Ok(()) => guard(self.start_inner(activities, orchestrations, diagnostics)).await,
            Err(e) => Err(e),
        };
        let mut state = self.lock();
        match result {
            Ok(running) => {
                state.phase = Phase::Running(running);
                Ok(())
            }
            Err(e) => {
                state.phase = Phase::Configuring;
                Err(e)
            }
        }
    }

    /// Stop the dispatchers, giving in-flight work `timeoutMs` (default 1000) to finish.
    /// No-op when not running.
    #[napi]
    pub async fn shutdown(&self, timeout_ms: Option<u32>) -> napi::Result<()> {
        let running = {
            let mut state = self.lock();
            match std::mem::replace(&mut state.phase, Phase::Stopping) {
                Phase::Running(r) => r,
                Phase::Configuring => {
                    state.phase = Phase::Stopped;
                    return Ok(());
                }
                other => {
                    state.phase = other;
                    return Ok(());
                }
            }
        };
        let result = guard(async move {
            running
                .runtime
                .shutdown(Some(timeout_ms.unwrap_or(1000).into()))
                .await;
            if let Some(f) = running.forwarder {
                f.abort();
            }
            if let Some(pg) = running.pg {
                pg.close().await;
            }
            Ok(())
        })
        .await;
        let mut state = self.lock();
        state.phase = Phase::Stopped;
        state.activities.clear();
        state.diagnostics = None;
        if let Some(logger) = state.logger.take() {
            crate::log_output::release(&logger);
        }
        drop(state);
        *self.driver.lock().unwrap_or_else(|p| p.into_inner()) = None;
        result
    }

    /// Counters since start, or null when not running.
    #[napi(catch_unwind)]
    pub fn metrics_snapshot(&self) -> Option<NativeMetricsSnapshot> {
        match &self.lock().phase {
            Phase::Running(r) => r.runtime.metrics_snapshot().map(metrics),
            _ => None,
        }
    }

    /// The process's metrics as Prometheus text (exposition format 0.0.4). With a
    /// PostgreSQL provider the queue gauges are read from the database first.
    #[napi]
    pub async fn metrics_text(&self) -> napi::Result<String> {
        guard(async {
            let handle = crate::prometheus::handle().map_err(|e| error(Code::Unsupported, e))?;
            if let Some(pg) = self.pg_store() {
                pg.refresh_metric_gauges()
                    .await
                    .map_err(crate::errors::provider_error)?;
            }
            Ok(handle.render())
        })
        .await
    }

    /// Whether dispatchers are running.
    #[napi]
    pub fn is_running(&self) -> bool {
        matches!(self.lock().phase, Phase::Running(_))
    }

    // ---- synchronous calls from a running generator (keyed by turn id) ----

    #[napi(catch_unwind)]
    pub fn orch_set_custom_status(&self, turn: i64, status: Option<String>) -> napi::Result<()> {
        let ctx = self.turn(turn)?;
        match status {
            Some(s) => ctx.set_custom_status(s),
            None => ctx.reset_custom_status(),
        }
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn orch_get_custom_status(&self, turn: i64) -> napi::Result<Option<String>> {
        Ok(self.turn(turn)?.get_custom_status())
    }

    #[napi(catch_unwind)]
    pub fn orch_set_value(&self, turn: i64, key: String, value: String) -> napi::Result<()> {
        self.turn(turn)?.set_kv_value(key, value);
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn orch_get_value(&self, turn: i64, key: String) -> napi::Result<Option<String>> {
        Ok(self.turn(turn)?.get_kv_value(&key))
    }

    #[napi(catch_unwind)]
    pub fn orch_clear_value(&self, turn: i64, key: String) -> napi::Result<()> {
        self.turn(turn)?.clear_kv_value(key);
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn orch_clear_all_values(&self, turn: i64) -> napi::Result<()> {
        self.turn(turn)?.clear_all_kv_values();
        Ok(())
    }

    /// Every KV entry of the instance, as an object.
    #[napi(catch_unwind)]
    pub fn orch_get_all_values(&self, turn: i64) -> napi::Result<HashMap<String, String>> {
        Ok(self.turn(turn)?.get_kv_all_values())
    }

    /// KV keys in key order.
    #[napi(catch_unwind)]
    pub fn orch_get_all_keys(&self, turn: i64) -> napi::Result<Vec<String>> {
        Ok(self.turn(turn)?.get_kv_all_keys())
    }

    #[napi(catch_unwind)]
    pub fn orch_get_kv_length(&self, turn: i64) -> napi::Result<u32> {
        Ok(self.turn(turn)?.get_kv_length() as u32)
    }

    /// Clear entries last written before `updated_before_ms` (validated in JS); returns how many.
    #[napi(catch_unwind)]
    pub fn orch_prune_values_updated_before(
        &self,
        turn: i64,
        updated_before_ms: f64,
    ) -> napi::Result<u32> {
        let cutoff = updated_before_ms.max(0.0) as u64;
        Ok(self.turn(turn)?.prune_kv_values_updated_before(cutoff) as u32)
    }

    #[napi(catch_unwind)]
    pub fn orch_is_replaying(&self, turn: i64) -> napi::Result<bool> {
        Ok(self.turn(turn)?.is_replaying())
    }

    /// Log through duroxide (suppressed while replaying). `level`: info, warn, error, debug.
    #[napi(catch_unwind)]
    pub fn orch_trace(&self, turn: i64, level: String, message: String) -> napi::Result<()> {
        self.turn(turn)?.trace(level, message);
        Ok(())
    }

    // ---- synchronous calls from a running activity (keyed by call id) ----

    #[napi(catch_unwind)]
    pub fn activity_trace(&self, id: i64, level: String, message: String) -> napi::Result<()> {
        let ctx = self.activity(id)?;
        match level.as_str() {
            "warn" => ctx.trace_warn(message),
            "error" => ctx.trace_error(message),
            "debug" => ctx.trace_debug(message),
            _ => ctx.trace_info(message),
        }
        Ok(())
    }

    #[napi(catch_unwind)]
    pub fn activity_is_cancelled(&self, id: i64) -> napi::Result<bool> {
        Ok(self.activity(id)?.is_cancelled())
    }

    #[napi(catch_unwind)]
    pub fn activity_client(&self, id: i64) -> napi::Result<NativeClient> {
        Ok(NativeClient {
            inner: self.activity(id)?.get_client(),
            pg: self.pg_store(),
        })
    }
}

impl NativeRuntime {
    /// steadfast-pg for admin reads (an activity's client, the metrics gauges): the runtime's
    /// own pool (which its duroxide client uses too) while running, else the provider's. None
    /// on SQLite.
    fn pg_store(&self) -> Option<Arc<steadfast_pg::PostgresProvider>> {
        let provider = self.backend.postgres()?;
        match &self.lock().phase {
            Phase::Running(Running { pg: Some(pg), .. }) => Some(pg.clone()),
            _ => Some(provider),
        }
    }

    async fn start_inner(
        &self,
        activities: Vec<(String, Arc<ActivityCallback>)>,
        orchestrations: Vec<(String, String)>,
        diagnostics: Option<Arc<DiagnosticCallback>>,
    ) -> napi::Result<Running> {
        let driver = self.driver().ok_or_else(|| {
            error(
                Code::InvalidState,
                "internal: orchestration driver not installed",
            )
        })?;
        let orch_registry = orchestration_registry(driver, self.retried.clone(), &orchestrations)
            .map_err(|e| error(Code::Registration, e))?;
        let act_registry = activity_registry(&activities, &self.calls)
            .map_err(|e| error(Code::Registration, e))?;
        let sink = DiagnosticSink::new(diagnostics);
        self.lifecycle.set_sink(sink.clone());

        let (store, pg, forwarder): (Arc<dyn duroxide::providers::Provider>, _, _) =
            match &self.backend {
                Backend::Sqlite(p) => (
                    Arc::new(Layered(ObservedProvider::new(
                        p.clone(),
                        Some(sink.clone()),
                        self.observers(),
                    ))),
                    None,
                    None,
                ),
                Backend::Postgres { options, .. } => {
                    let mut options = (**options).clone();
                    self.claim.apply(&mut options);
                    let pg = Arc::new(connect(options).await?);
                    // steadfast-pg reports every poison disposition (committed, committed
                    // without lease, lost) itself, so it is the only source here.
                    let forwarder = forward_pg(&pg, sink.clone());
                    let store: Arc<dyn duroxide::providers::Provider> = Arc::new(Layered(
                        ObservedProvider::new(pg.clone(), None, self.observers()),
                    ));
                    (store, Some(pg), Some(forwarder))
                }
            };

        let runtime = runtime::Runtime::start_with_options(
            store,
            act_registry,
            orch_registry,
            self.options.clone(),
        )
        .await;
        Ok(Running {
            runtime,
            pg,
            forwarder,
        })
    }
}
