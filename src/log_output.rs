//! Where the process's tracing records (duroxide's orchestration, activity and runtime logs,
//! steadfast-pg's diagnostics) go once a runtime starts: to the runtime's `logger` option,
//! or to stdout as duroxide would print them, but without ANSI colours when stdout is not
//! a terminal. A tracing subscriber is process-wide and set once, so the first runtime to
//! start decides (unless `initTracing` decided before it); a later runtime's `logger`
//! replaces the earlier one's as the receiver.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, RwLock};

use duroxide::runtime::LogFormat;
use duroxide::runtime::observability::ObservabilityConfig;
use napi::Status;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::Layered;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use crate::errors::{Code, error};

/// Receives one record as JSON text: `{ level, target, message, fields }`.
pub(crate) type LogCallback = ThreadsafeFunction<String, (), String, Status, false, true>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Output {
    Stdout,
    Logger,
}

/// What this module installed, if anything (serialises concurrent starts).
static INSTALLED: Mutex<Option<Output>> = Mutex::new(None);
/// The logger records go to while the installed output is `Logger`.
static RECEIVER: RwLock<Option<Arc<LogCallback>>> = RwLock::new(None);

/// The filter: `RUST_LOG` when set; else `directives` (the `logFilter` option); else warnings
/// from everything and `level` for orchestration and activity traces (duroxide's default).
pub(crate) fn filter(level: &str, directives: Option<&str>) -> Result<EnvFilter, String> {
    if let Ok(f) = EnvFilter::try_from_default_env() {
        return Ok(f);
    }
    match directives {
        Some(d) => logfilter(d),
        None => Ok(EnvFilter::new(format!(
            "warn,duroxide::orchestration={level},duroxide::activity={level}"
        ))),
    }
}

/// The `logFilter` option's directives, or the error naming it.
pub(crate) fn logfilter(directives: &str) -> Result<EnvFilter, String> {
    EnvFilter::try_new(directives).map_err(|e| format!("logFilter: {e} (got {directives:?})"))
}

/// Set up the output before a runtime starts (duroxide's own stdout subscriber then finds
/// one installed and stands aside).
pub(crate) fn install(
    logger: Option<Arc<LogCallback>>,
    observability: &ObservabilityConfig,
    directives: Option<&str>,
) -> napi::Result<()> {
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    let filter =
        || filter(&observability.log_level, directives).map_err(|e| error(Code::InvalidOptions, e));
    match (logger, *installed) {
        (Some(logger), Some(Output::Logger)) => set_receiver(Some(logger)),
        (Some(logger), None) => {
            filtered(ForwardToLogger, filter()?)
                .try_init()
                .map_err(|_| {
                    error(
                        Code::InvalidState,
                        "logger: this process's tracing output is already set (by initTracing \
                         or by a runtime that started without a logger); give the logger to \
                         the first runtime that starts",
                    )
                })?;
            *installed = Some(Output::Logger);
            set_receiver(Some(logger));
        }
        (Some(_), Some(Output::Stdout)) => {
            return Err(error(
                Code::InvalidState,
                "logger: an earlier runtime of this process started without a logger and \
                 logs to stdout; give the logger to the first runtime that starts",
            ));
        }
        (None, Some(_)) => {}
        (None, None) => {
            let ansi = std::io::stdout().is_terminal();
            let stdout: Box<dyn Layer<_> + Send + Sync> = match observability.log_format {
                LogFormat::Json => Box::new(tracing_subscriber::fmt::layer().json()),
                LogFormat::Pretty => Box::new(tracing_subscriber::fmt::layer().with_ansi(ansi)),
                LogFormat::Compact => {
                    Box::new(tracing_subscriber::fmt::layer().compact().with_ansi(ansi))
                }
            };
            // Fails only when initTracing installed its file output first: keep that.
            if filtered(stdout, filter()?).try_init().is_ok() {
                *installed = Some(Output::Stdout);
            }
        }
    }
    Ok(())
}

/// The process's subscriber (a runtime's output, or `initTracing`'s file): `output`
/// receives what `filter` lets through.
///
/// The filter is global, not `output.with_filter(filter)`: a per-layer filter keeps its
/// verdict in a thread-local between `enabled` and the event, and a check that is not
/// followed by its event leaves the refusal standing: the thread's next event is then
/// dropped, whatever its level and target. sqlx-postgres does that for every server NOTICE
/// (`log::log_enabled!` at info, then a tracing event this filter never lets through).
pub(crate) fn filtered<L>(output: L, filter: EnvFilter) -> impl tracing::Subscriber + Send + Sync
where
    L: Layer<Layered<EnvFilter, Registry>> + Send + Sync,
{
    tracing_subscriber::registry().with(filter).with(output)
}

/// Stop sending records to `logger` (a runtime shutting down), unless another runtime's
/// logger replaced it meanwhile.
pub(crate) fn release(logger: &Arc<LogCallback>) {
    let mut receiver = RECEIVER.write().unwrap_or_else(|e| e.into_inner());
    if receiver.as_ref().is_some_and(|r| Arc::ptr_eq(r, logger)) {
        *receiver = None;
    }
}

fn set_receiver(logger: Option<Arc<LogCallback>>) {
    *RECEIVER.write().unwrap_or_else(|e| e.into_inner()) = logger;
}

struct ForwardToLogger;

impl<S: tracing::Subscriber> Layer<S> for ForwardToLogger {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let Some(receiver) = RECEIVER.read().ok().and_then(|r| r.clone()) else {
            return;
        };
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        let record = serde_json::json!({
            "level": meta.level().as_str().to_ascii_lowercase(),
            "target": meta.target(),
            "message": fields.message,
            "fields": fields.values,
        });
        let _ = receiver.call(record.to_string(), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

#[derive(Default)]
struct Fields {
    message: String,
    values: Map<String, Value>,
}

impl Fields {
    fn put(&mut self, field: &Field, value: Value) {
        if field.name() == "message" {
            self.message = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
        } else {
            self.values.insert(field.name().to_string(), value);
        }
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, Value::from(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, Value::from(format!("{value:?}")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The targets of the events that reach it.
    #[derive(Clone, Default)]
    struct Targets(Arc<Mutex<Vec<String>>>);

    impl<S: tracing::Subscriber> Layer<S> for Targets {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let target = event.metadata().target().to_string();
            self.0.lock().unwrap().push(target);
        }
    }

    #[test]
    fn a_check_the_filter_refuses_does_not_drop_the_next_event_on_its_thread() {
        // As `try_init` does: `log` records reach the tracing subscriber.
        let _ = tracing_log::LogTracer::init();
        let seen = Targets::default();
        let filter = logfilter("warn,steadfast_pg=info").unwrap();
        tracing::subscriber::with_default(filtered(seen.clone(), filter), || {
            // What sqlx-postgres does with a server NOTICE: asks `log`, then records it
            // through tracing (where the filter's interest for the callsite is `never`).
            if log::log_enabled!(target: "sqlx::postgres::notice", log::Level::Info) {
                tracing::info!(target: "sqlx::postgres::notice", "relation exists, skipping");
            }
            tracing::info!(target: "steadfast_pg", event = "steadfast.poison_committed");
            tracing::warn!(target: "duroxide::runtime", "a warning");
        });
        assert_eq!(
            *seen.0.lock().unwrap(),
            ["steadfast_pg", "duroxide::runtime"]
        );
    }
}
