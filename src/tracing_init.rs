//! `initTracing`: send the process's tracing output (duroxide's orchestration and activity
//! traces, steadfast-pg's diagnostics) to a file instead of stdout.
//!
//! duroxide installs a process-global stdout subscriber on the first `Runtime.start()` and
//! ignores the failure when one is already installed, so this must run first. Unlike
//! duroxide-node, a second call (or a call after a runtime installed its subscriber) is
//! reported as an `InvalidState` error rather than a generic one.

use std::fs::OpenOptions;
use std::sync::Mutex;

use napi_derive::napi;
use tracing_subscriber::layer::Layered;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use crate::errors::{Code, error};

/// Options of `initTracing` (validated by the JS layer).
#[napi(object)]
pub struct NativeTracingOptions {
    /// File to append to (created if missing).
    pub log_file: String,
    /// `error`, `warn`, `info`, `debug`, `trace` or `off`; default `info`.
    pub log_level: Option<String>,
    /// `json`, `pretty` or `compact`; default `compact`.
    pub log_format: Option<String>,
}

const LEVELS: [&str; 6] = ["error", "warn", "info", "debug", "trace", "off"];

/// duroxide's default filter: warnings from everything, `level` for orchestration and
/// activity traces. `RUST_LOG`, when set, wins (as in duroxide).
fn filter(level: &str) -> EnvFilter {
    crate::log_output::filter(level, None).unwrap_or_else(|_| EnvFilter::new("warn"))
}

type BoxedLayer = Box<dyn Layer<Layered<EnvFilter, Registry>> + Send + Sync>;

/// Install a process-wide subscriber appending to `logFile` (once, before the first start).
#[napi(catch_unwind)]
pub fn init_tracing(options: NativeTracingOptions) -> napi::Result<()> {
    let level = options.log_level.as_deref().unwrap_or("info");
    if !LEVELS.contains(&level) {
        return Err(error(
            Code::InvalidArgument,
            format!("options.logLevel must be one of {LEVELS:?} (got {level:?})"),
        ));
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&options.log_file)
        .map_err(|e| {
            error(
                Code::InvalidArgument,
                format!("options.logFile: cannot open {:?}: {e}", options.log_file),
            )
        })?;
    let writer = Mutex::new(file);
    let layer: BoxedLayer = match options.log_format.as_deref().unwrap_or("compact") {
        "json" => Box::new(tracing_subscriber::fmt::layer().json().with_writer(writer)),
        "pretty" => Box::new(
            tracing_subscriber::fmt::layer()
                .with_ansi(false)
                .with_writer(writer),
        ),
        "compact" => Box::new(
            tracing_subscriber::fmt::layer()
                .compact()
                .with_ansi(false)
                .with_writer(writer),
        ),
        other => {
            return Err(error(
                Code::InvalidArgument,
                format!(
                    "options.logFormat must be \"json\", \"pretty\" or \"compact\" (got {other:?})"
                ),
            ));
        }
    };
    crate::log_output::filtered(layer, filter(level))
        .try_init()
        .map_err(|e| {
            error(
                Code::InvalidState,
                format!(
                    "tracing is already initialized ({e}); call initTracing once, before the \
                     first Runtime.start()"
                ),
            )
        })
}
