//! The one seam where Rust errors become JS exceptions. Each error carries a stable code.
//!
//! napi-rs 3 converts only `napi::Error<Status>` for async functions and `catch_unwind`
//! entry points, so the code travels as a `[ERR_STEADFAST_…] ` prefix of the message and
//! `lib/errors.js` (the JS half of this seam) moves it to `err.code`. Messages never include
//! database URLs (steadfast-pg redacts them).

use std::future::Future;
use std::panic::AssertUnwindSafe;

use duroxide::ClientError;
use duroxide::providers::ProviderError;
use futures_util::FutureExt;

/// Stable error codes, visible to JS as `err.code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// A value passed from JS was malformed (the JS layer validates first; this is the backstop).
    InvalidArgument,
    /// Runtime or provider options broke a rule.
    InvalidOptions,
    /// An orchestration or activity registration was rejected.
    Registration,
    /// The runtime is in the wrong state for the call (already started, shut down, ...).
    InvalidState,
    /// Opening or connecting a provider failed.
    ProviderOpen,
    /// A provider (storage) operation failed.
    Provider,
    /// A wait ran out of time.
    Timeout,
    /// A wait was aborted (its `AbortSignal` fired).
    Aborted,
    /// The instance does not exist.
    NotFound,
    /// The instance is still running (delete without force).
    InstanceRunning,
    /// A start with `ifExists: 'throw'` found the instance already there.
    InstanceExists,
    /// The operation is not available on this provider (e.g. dead letters on SQLite).
    Unsupported,
    /// A panic was caught at the boundary.
    Panic,
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        match self {
            Code::InvalidArgument => "ERR_STEADFAST_INVALID_ARGUMENT",
            Code::InvalidOptions => "ERR_STEADFAST_INVALID_OPTIONS",
            Code::Registration => "ERR_STEADFAST_REGISTRATION",
            Code::InvalidState => "ERR_STEADFAST_INVALID_STATE",
            Code::ProviderOpen => "ERR_STEADFAST_PROVIDER_OPEN",
            Code::Provider => "ERR_STEADFAST_PROVIDER",
            Code::Timeout => "ERR_STEADFAST_TIMEOUT",
            Code::Aborted => "ERR_STEADFAST_ABORTED",
            Code::NotFound => "ERR_STEADFAST_NOT_FOUND",
            Code::InstanceRunning => "ERR_STEADFAST_INSTANCE_RUNNING",
            Code::InstanceExists => "ERR_STEADFAST_INSTANCE_EXISTS",
            Code::Unsupported => "ERR_STEADFAST_UNSUPPORTED",
            Code::Panic => "ERR_STEADFAST_PANIC",
        }
    }
}

pub type JsError = napi::Error;

/// Build the JS error for `code`.
pub fn error(code: Code, message: impl std::fmt::Display) -> JsError {
    napi::Error::new(
        napi::Status::GenericFailure,
        format!("[{}] {message}", code.as_ref()),
    )
}

/// Map a duroxide client error.
pub fn client_error(e: ClientError) -> JsError {
    let code = match &e {
        ClientError::Provider(_) | ClientError::ManagementNotAvailable => Code::Provider,
        ClientError::InvalidInput { .. } | ClientError::CannotDeleteSubOrchestration { .. } => {
            Code::InvalidArgument
        }
        ClientError::Timeout => Code::Timeout,
        ClientError::InstanceStillRunning { .. } => Code::InstanceRunning,
        ClientError::InstanceNotFound { .. } => Code::NotFound,
    };
    error(code, e)
}

/// Map a provider (storage) error, e.g. from steadfast-pg's dead-letter API. Its text names
/// the operation and never the database URL.
pub fn provider_error(e: ProviderError) -> JsError {
    error(Code::Provider, e)
}

/// Text of a caught panic payload.
pub fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Run an async entry point, turning a panic into a `Code::Panic` rejection.
pub async fn guard<T>(fut: impl Future<Output = napi::Result<T>>) -> napi::Result<T> {
    match AssertUnwindSafe(fut).catch_unwind().await {
        Ok(result) => result,
        Err(payload) => Err(error(
            Code::Panic,
            format!("internal panic: {}", panic_message(payload)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_prefixed() {
        for c in [
            Code::InvalidArgument,
            Code::InvalidOptions,
            Code::Registration,
            Code::InvalidState,
            Code::ProviderOpen,
            Code::Provider,
            Code::Timeout,
            Code::NotFound,
            Code::InstanceRunning,
            Code::Unsupported,
            Code::Panic,
        ] {
            assert!(c.as_ref().starts_with("ERR_STEADFAST_"));
        }
        assert!(
            client_error(ClientError::Timeout)
                .reason
                .starts_with("[ERR_STEADFAST_TIMEOUT] ")
        );
        let e = provider_error(ProviderError::permanent("list_dead_letters", "boom"));
        assert_eq!(e.reason, "[ERR_STEADFAST_PROVIDER] list_dead_letters: boom");
    }

    #[tokio::test]
    async fn guard_turns_panics_into_errors() {
        let r: napi::Result<()> = guard(async { panic!("boom") }).await;
        let e = r.unwrap_err();
        assert!(
            e.reason.starts_with("[ERR_STEADFAST_PANIC] "),
            "{}",
            e.reason
        );
        assert!(e.reason.contains("boom"));
    }
}
