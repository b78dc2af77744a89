//! Activities: each JS activity function is called through a threadsafe function that
//! returns a Promise of an envelope (`{"ok": "<json>"}` or `{"err": "<message>"}`); the JS
//! layer never lets the promise reject. The duroxide `ActivityContext` is kept in a
//! per-runtime map under a per-call id so `ctx.isCancelled()`, `ctx.trace*()` and
//! `ctx.getClient()` can reach it while the call runs. When duroxide cancels the activity,
//! the same callback is called with `{"abort": <id>}`, which aborts `ctx.signal`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use duroxide::ActivityContext;
use napi::Status;
use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde::Deserialize;
use serde_json::json;

/// A JS activity: request JSON in, Promise of the envelope out.
pub(crate) type ActivityCallback =
    ThreadsafeFunction<String, Promise<String>, String, Status, false, true>;

/// The live activity calls of one runtime.
#[derive(Default)]
pub(crate) struct ActivityCalls {
    contexts: Mutex<HashMap<i64, ActivityContext>>,
    next_id: AtomicI64,
}

impl ActivityCalls {
    pub fn context(&self, id: i64) -> Option<ActivityContext> {
        self.contexts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
    }
}

/// Removes the context when the call ends (or its task is aborted).
struct CallGuard<'a> {
    calls: &'a ActivityCalls,
    id: i64,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        self.calls
            .contexts
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    ok: Option<String>,
    err: Option<String>,
}

/// The activity handler registered with duroxide for every JS activity.
pub(crate) async fn run(
    callback: Arc<ActivityCallback>,
    calls: Arc<ActivityCalls>,
    ctx: ActivityContext,
    input: String,
) -> Result<String, String> {
    let id = calls.next_id.fetch_add(1, Ordering::Relaxed) + 1;
    let request = json!({
        "id": id,
        "instanceId": ctx.instance_id(),
        "executionId": ctx.execution_id(),
        "orchestrationName": ctx.orchestration_name(),
        "orchestrationVersion": ctx.orchestration_version(),
        "activityName": ctx.activity_name(),
        "workerId": ctx.worker_id(),
        "sessionId": ctx.session_id(),
        "tag": ctx.tag(),
        "input": input,
    })
    .to_string();
    let cancellation = ctx.cancellation_token();
    calls
        .contexts
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, ctx);
    let _guard = CallGuard { calls: &calls, id };

    let promise = match callback.call_async_catch(request).await {
        Ok(p) => p,
        Err(e) if e.status == Status::PendingException => {
            return Err(format!("activity call failed: {}", e.reason));
        }
        // The JS environment is gone (process exiting): never ack, so the work item's lock
        // expires and it is redelivered elsewhere.
        Err(_) => return std::future::pending().await,
    };
    // duroxide cancels the activity (its orchestration no longer needs it, or its lease was
    // lost) and then waits out the grace period: tell JS at once (`ctx.signal` aborts), and
    // keep waiting for its answer.
    let mut promise = std::pin::pin!(promise);
    let settled = tokio::select! {
        settled = &mut promise => settled,
        () = cancellation.cancelled() => {
            let abort = json!({ "abort": id }).to_string();
            let _ = callback.call(abort, ThreadsafeFunctionCallMode::NonBlocking);
            promise.await
        }
    };
    let envelope = match settled {
        Ok(text) => text,
        Err(e) => return Err(format!("activity failed: {}", e.reason)),
    };
    match serde_json::from_str::<Envelope>(&envelope) {
        Ok(Envelope { ok: Some(v), .. }) => Ok(v),
        Ok(Envelope { err: Some(e), .. }) => Err(e),
        _ => Err(format!("internal: malformed activity result: {envelope}")),
    }
}
