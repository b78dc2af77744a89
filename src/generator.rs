//! The orchestration driver: runs JS generator functions under duroxide's replay engine.
//!
//! duroxide polls an orchestration's future with a no-op waker, once per applied history
//! event plus a quiescence loop, and never wakes it. So every JS round-trip happens inside
//! one poll: the handler calls the JS driver through a threadsafe function and blocks its
//! tokio worker (`block_in_place` + `block_on`) until the Node thread has answered.
//!
//! Each turn starts from scratch: the handler opens a [`Turn`] with a process-unique id,
//! asks JS to *create* the generator and advance it to its first `yield`, turns every
//! yielded task descriptor into exactly one duroxide durable future (or a `join` / N-way
//! select over several), and feeds the outcome back with *next* until the generator returns
//! or throws. The replay engine decides what is replay and what is new, so the generator
//! cannot tell the difference. When the handler future is dropped, the turn's context is
//! removed and JS is told to *dispose* the generator.
//!
//! Contexts are keyed by turn id, not instance id, in a map owned by one runtime: two
//! concurrent turns of the same instance (possible after a lock loss) never share state, and
//! two runtimes in one process never see each other's orchestrations.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, UNIX_EPOCH};

use duroxide::OrchestrationContext;
use napi::Status;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::retried_turns::RetriedTurns;

/// The JS driver: one JSON request in, one JSON reply out (synchronously).
pub(crate) type DriverCallback = ThreadsafeFunction<String, String, String, Status, false, true>;

/// Per-runtime driver state: the JS callback and the live turns' contexts.
pub(crate) struct Driver {
    callback: DriverCallback,
    turns: Mutex<HashMap<i64, OrchestrationContext>>,
    next_turn: AtomicI64,
}

impl Driver {
    pub fn new(callback: DriverCallback) -> Self {
        Self {
            callback,
            turns: Mutex::new(HashMap::new()),
            next_turn: AtomicI64::new(1),
        }
    }

    /// The context of a live turn, for the synchronous JS context methods.
    pub fn context(&self, turn: i64) -> Option<OrchestrationContext> {
        self.turns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&turn)
            .cloned()
    }

    #[cfg(test)]
    fn live_turns(&self) -> usize {
        self.turns.lock().unwrap().len()
    }
}

/// One turn's registration; dropping it forgets the context and disposes the generator.
struct Turn {
    driver: Arc<Driver>,
    id: i64,
}

impl Turn {
    fn open(driver: Arc<Driver>, ctx: OrchestrationContext) -> Self {
        let id = driver.next_turn.fetch_add(1, Ordering::Relaxed);
        driver
            .turns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, ctx);
        Self { driver, id }
    }

    /// One synchronous round-trip to the JS driver.
    fn call(&self, request: Value) -> Result<Step, String> {
        let reply = call_blocking(&self.driver.callback, request.to_string())?;
        serde_json::from_str::<Step>(&reply)
            .map_err(|e| format!("internal: malformed reply from the JS driver: {e}"))
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.driver
            .turns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.id);
        let request = json!({ "op": "dispose", "turn": self.id }).to_string();
        let _ = self
            .driver
            .callback
            .call(request, ThreadsafeFunctionCallMode::NonBlocking);
    }
}

/// Call the JS driver and wait for its answer on this thread.
///
/// If the JS environment is gone (the process or worker is exiting), the turn must not
/// commit anything: returning would let duroxide durably fail or stall the instance. The
/// thread parks instead; the lock expires and another process redelivers the turn.
fn call_blocking(callback: &DriverCallback, request: String) -> Result<String, String> {
    let handle = tokio::runtime::Handle::try_current()
        .map_err(|e| format!("internal: orchestration polled outside a tokio runtime: {e}"))?;
    let result =
        tokio::task::block_in_place(|| handle.block_on(callback.call_async_catch(request)));
    match result {
        Ok(reply) => Ok(reply),
        Err(e) if e.status == Status::PendingException || e.status == Status::StringExpected => {
            Err(format!("internal: the JS driver failed: {}", e.reason))
        }
        Err(_) => tokio::task::block_in_place(|| {
            loop {
                std::thread::park();
            }
        }),
    }
}

/// The JS driver's reply.
#[derive(Debug, Deserialize)]
#[serde(tag = "status", rename_all = "camelCase")]
enum Step {
    Yielded { task: Value },
    Completed { output: String },
    Failed { message: String },
}

/// A task descriptor yielded by a generator.
#[derive(Debug, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
enum Task {
    Activity {
        name: String,
        input: String,
        tag: Option<String>,
        session_id: Option<String>,
    },
    ActivityWithRetry {
        name: String,
        input: String,
        retry: crate::retry::Retry,
        session_id: Option<String>,
    },
    Timer {
        delay_ms: u64,
    },
    WaitEvent {
        name: String,
    },
    DequeueEvent {
        queue: String,
    },
    GetValueFromInstance {
        instance_id: String,
        key: String,
    },
    /// Detached start: fire and forget, resolves at once with `null`.
    StartOrchestration {
        name: String,
        instance_id: String,
        input: String,
        version: Option<String>,
    },
    SubOrchestration {
        name: String,
        input: String,
        instance_id: Option<String>,
        version: Option<String>,
    },
    NewGuid,
    UtcNow,
    ContinueAsNew {
        input: String,
        version: Option<String>,
    },
    All {
        tasks: Vec<Task>,
    },
    Race {
        tasks: Vec<Task>,
    },
}

/// What a yield resumes the generator with.
enum Outcome {
    Value(Value),
    Error {
        message: String,
        index: Option<usize>,
    },
}

type Leaf = Pin<Box<dyn Future<Output = Result<Value, String>> + Send>>;

/// Parse JSON text produced by the JS layer; keep anything else as a string.
fn parse_json(text: String) -> Value {
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

/// One durable future for a non-composite task.
fn leaf(ctx: &OrchestrationContext, task: Task) -> Result<Leaf, String> {
    Ok(match task {
        Task::Activity {
            name,
            input,
            tag,
            session_id,
        } => {
            let mut f = match session_id {
                Some(session) => ctx.schedule_activity_on_session(name, input, session),
                None => ctx.schedule_activity(name, input),
            };
            if let Some(tag) = tag {
                f = f.with_tag(tag);
            }
            Box::pin(async move { f.await.map(parse_json) })
        }
        Task::ActivityWithRetry {
            name,
            input,
            retry,
            session_id,
        } => {
            let retried = crate::retry::RetriedActivity::new(name, input, session_id, retry)?;
            let ctx = ctx.clone();
            Box::pin(async move { retried.run(&ctx).await.map(parse_json) })
        }
        Task::Timer { delay_ms } => {
            let f = ctx.schedule_timer(Duration::from_millis(delay_ms));
            Box::pin(async move {
                f.await;
                Ok(Value::Null)
            })
        }
        Task::WaitEvent { name } => {
            let f = ctx.schedule_wait(name);
            Box::pin(async move { Ok(parse_json(f.await)) })
        }
        Task::DequeueEvent { queue } => {
            let f = ctx.dequeue_event(queue);
            Box::pin(async move { Ok(parse_json(f.await)) })
        }
        Task::GetValueFromInstance { instance_id, key } => {
            let f = ctx.get_kv_value_from_instance(instance_id, key);
            Box::pin(async move { f.await.map(|v| v.map_or(Value::Null, Value::String)) })
        }
        Task::SubOrchestration {
            name,
            input,
            instance_id,
            version,
        } => {
            let f = match instance_id {
                Some(id) => {
                    ctx.schedule_sub_orchestration_versioned_with_id(name, version, id, input)
                }
                None => ctx.schedule_sub_orchestration_versioned(name, version, input),
            };
            Box::pin(async move { f.await.map(parse_json) })
        }
        // These return futures that borrow the context, so they are created on first poll
        // (like `schedule_activity_with_retry`). join and race poll every child in order on
        // their first poll, so the order of scheduled actions is the same on every replay.
        Task::NewGuid => {
            let ctx = ctx.clone();
            Box::pin(async move { ctx.new_guid().await.map(Value::String) })
        }
        Task::UtcNow => {
            let ctx = ctx.clone();
            Box::pin(async move {
                let t = ctx.utc_now().await?;
                let ms = t
                    .duration_since(UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0);
                Ok(Value::from(ms))
            })
        }
        Task::ContinueAsNew { .. }
        | Task::StartOrchestration { .. }
        | Task::All { .. }
        | Task::Race { .. } => {
            return Err(
                "continueAsNew, startOrchestration, all and race cannot be nested inside all() \
                 or race()"
                    .into(),
            );
        }
    })
}

/// First ready future wins, polled in order (deterministic under replay). Losers are
/// dropped with the combinator, which cancels their durable work.
struct SelectN {
    futures: Vec<Leaf>,
}

impl Future for SelectN {
    type Output = (usize, Result<Value, String>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        for (index, f) in self.futures.iter_mut().enumerate() {
            if let Poll::Ready(v) = f.as_mut().poll(cx) {
                return Poll::Ready((index, v));
            }
        }
        Poll::Pending
    }
}

/// Execute one yielded task. `Err` fails the orchestration (a malformed descriptor).
async fn execute(ctx: &OrchestrationContext, task: Task) -> Result<Outcome, String> {
    match task {
        Task::All { tasks } => {
            let leaves = tasks
                .into_iter()
                .map(|t| leaf(ctx, t))
                .collect::<Result<Vec<_>, _>>()?;
            let results = ctx.join(leaves).await;
            Ok(Outcome::Value(Value::Array(
                results
                    .into_iter()
                    .map(|r| match r {
                        Ok(v) => json!({ "ok": v }),
                        Err(e) => json!({ "err": e }),
                    })
                    .collect(),
            )))
        }
        Task::Race { tasks } => {
            if tasks.len() < 2 {
                return Err(format!(
                    "race() needs at least 2 tasks (got {})",
                    tasks.len()
                ));
            }
            let futures = tasks
                .into_iter()
                .map(|t| leaf(ctx, t))
                .collect::<Result<Vec<_>, _>>()?;
            let (index, result) = SelectN { futures }.await;
            Ok(match result {
                Ok(value) => Outcome::Value(json!({ "index": index, "value": value })),
                Err(message) => Outcome::Error {
                    message,
                    index: Some(index),
                },
            })
        }
        Task::StartOrchestration {
            name,
            instance_id,
            input,
            version,
        } => {
            // duroxide panics on its reserved generated-id markers; the JS layer rejects them
            // first, this keeps a bad descriptor a plain failure.
            if instance_id.starts_with(duroxide::SUB_ORCH_AUTO_PREFIX)
                || instance_id.contains("::sub::")
            {
                return Err(format!(
                    "startOrchestration: instance id {instance_id:?} uses a reserved sub-orchestration marker"
                ));
            }
            ctx.schedule_orchestration_versioned(name, version, instance_id, input);
            Ok(Outcome::Value(Value::Null))
        }
        Task::ContinueAsNew { input, version } => {
            match version {
                Some(v) => {
                    let _ = ctx.continue_as_new_versioned(v, input).await;
                }
                None => {
                    let _ = ctx.continue_as_new(input).await;
                }
            }
            // duroxide's continue-as-new future never resolves.
            std::future::pending().await
        }
        other => Ok(match leaf(ctx, other)?.await {
            Ok(v) => Outcome::Value(v),
            Err(message) => Outcome::Error {
                message,
                index: None,
            },
        }),
    }
}

/// The orchestration handler registered with duroxide for every JS orchestration.
pub(crate) async fn run(
    driver: Arc<Driver>,
    retried: Arc<RetriedTurns>,
    ctx: OrchestrationContext,
    input: String,
) -> Result<String, String> {
    let turn = Turn::open(driver, ctx.clone());
    // The attempt of a retried claim: JS runs this turn's steps under a deadline.
    let attempt = retried.take(&ctx.instance_id());
    let mut step = turn.call(json!({
        "op": "create",
        "turn": turn.id,
        "name": ctx.orchestration_name(),
        "version": ctx.orchestration_version(),
        "instanceId": ctx.instance_id(),
        "executionId": ctx.execution_id(),
        "input": input,
        "attempt": attempt,
    }))?;
    loop {
        match step {
            Step::Completed { output } => return Ok(output),
            Step::Failed { message } => return Err(message),
            Step::Yielded { task } => {
                let task: Task = serde_json::from_value(task)
                    .map_err(|e| format!("invalid task yielded by the orchestration: {e}"))?;
                let request = match execute(&ctx, task).await? {
                    Outcome::Value(value) => {
                        json!({ "op": "next", "turn": turn.id, "ok": true, "value": value })
                    }
                    Outcome::Error { message, index } => json!({
                        "op": "next", "turn": turn.id, "ok": false, "error": message, "index": index,
                    }),
                };
                step = turn.call(request)?;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_decode() {
        let t: Task = serde_json::from_value(json!({
            "type": "race",
            "tasks": [
                {"type": "activity", "name": "A", "input": "1"},
                {"type": "timer", "delayMs": 5},
                {"type": "subOrchestration", "name": "C", "input": "null", "instanceId": "c1"},
                {"type": "activityWithRetry", "name": "R", "input": "null",
                 "retry": {"maxAttempts": 3, "backoff": {"kind": "fixed", "delayMs": 10}}}
            ]
        }))
        .unwrap();
        let Task::Race { tasks } = t else {
            panic!("not a race")
        };
        assert_eq!(tasks.len(), 4);
        assert!(matches!(&tasks[1], Task::Timer { delay_ms: 5 }));
    }

    #[test]
    fn nested_composites_are_rejected() {
        let ctx =
            OrchestrationContext::new(Vec::new(), 1, "i".into(), "O".into(), "1.0.0".into(), None);
        let err = leaf(&ctx, Task::All { tasks: vec![] }).err().unwrap();
        assert!(err.contains("cannot be nested"));
    }

    #[test]
    fn session_and_detached_descriptors_decode() {
        let t: Task = serde_json::from_value(json!({
            "type": "activityWithRetry", "name": "A", "input": "1", "sessionId": "s1",
            "retry": {"maxAttempts": 2}, "typed": true
        }))
        .unwrap();
        assert!(matches!(t, Task::ActivityWithRetry { session_id: Some(ref s), .. } if s == "s1"));
        let t: Task = serde_json::from_value(json!({
            "type": "startOrchestration", "name": "O", "instanceId": "x", "input": "null",
            "version": "2.0.0"
        }))
        .unwrap();
        assert!(matches!(t, Task::StartOrchestration { version: Some(ref v), .. } if v == "2.0.0"));
    }

    #[test]
    fn detached_start_with_a_reserved_id_fails_instead_of_panicking() {
        let ctx =
            OrchestrationContext::new(Vec::new(), 1, "i".into(), "O".into(), "1.0.0".into(), None);
        for id in ["sub::1", "a::sub::1"] {
            let task = Task::StartOrchestration {
                name: "O".into(),
                instance_id: id.into(),
                input: "null".into(),
                version: None,
            };
            let rt = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            let err = rt.block_on(execute(&ctx, task)).err().unwrap();
            assert!(err.contains("reserved"), "{err}");
        }
    }

    #[test]
    fn json_values_keep_their_types() {
        assert_eq!(parse_json("42".into()), json!(42));
        assert_eq!(parse_json("\"s\"".into()), json!("s"));
        assert_eq!(parse_json("not json".into()), json!("not json"));
    }

    #[allow(dead_code)]
    fn driver_is_send_sync(d: Driver) -> usize {
        fn check<T: Send + Sync>(_: &T) {}
        check(&d);
        d.live_turns()
    }
}
