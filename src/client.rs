//! The management/control client. Inputs and outputs are JSON text; the JS layer encodes
//! and parses. On PostgreSQL it also reaches steadfast-pg's dead-letter store, which duroxide's
//! `Client` does not know about.

use std::sync::Arc;
use std::time::Duration;

use duroxide::{Client, OrchestrationStatus};
use napi_derive::napi;
use steadfast_pg::{DeadLetter, DeadLetterFilter, PostgresProvider};

use crate::client_manage::delete_result_to_js;
use crate::client_waits::abortable;
use crate::errors::{Code, JsError, client_error, error, guard, provider_error};
use crate::providers::NativeProvider;

/// Most dead letters one `list_dead_letters` call returns (the JS layer checks first).
const MAX_DEAD_LETTER_PAGE: u32 = 10_000;

/// Status of an instance. `output` is JSON text (parsed by the JS layer).
#[napi(object)]
pub struct NativeStatus {
    /// `NotFound`, `Running`, `Completed` or `Failed`.
    pub status: String,
    pub output: Option<String>,
    /// Failure message (`ErrorDetails::display_message`).
    pub error: Option<String>,
    /// Failure category: `application`, `infrastructure`, `configuration` or `poison`.
    pub error_category: Option<String>,
    pub custom_status: Option<String>,
    pub custom_status_version: f64,
}

pub(crate) fn status_to_js(s: OrchestrationStatus) -> NativeStatus {
    let mut out = NativeStatus {
        status: String::new(),
        output: None,
        error: None,
        error_category: None,
        custom_status: None,
        custom_status_version: 0.0,
    };
    match s {
        OrchestrationStatus::NotFound => out.status = "NotFound".into(),
        OrchestrationStatus::Running {
            custom_status,
            custom_status_version,
        } => {
            out.status = "Running".into();
            out.custom_status = custom_status;
            out.custom_status_version = custom_status_version as f64;
        }
        OrchestrationStatus::Completed {
            output,
            custom_status,
            custom_status_version,
        } => {
            out.status = "Completed".into();
            out.output = Some(output);
            out.custom_status = custom_status;
            out.custom_status_version = custom_status_version as f64;
        }
        OrchestrationStatus::Failed {
            details,
            custom_status,
            custom_status_version,
        } => {
            out.status = "Failed".into();
            out.error = Some(details.display_message());
            out.error_category = Some(details.category().to_string());
            out.custom_status = custom_status;
            out.custom_status_version = custom_status_version as f64;
        }
    }
    out
}

#[napi(object)]
pub struct NativeInstanceInfo {
    pub instance_id: String,
    pub orchestration_name: String,
    pub orchestration_version: String,
    pub current_execution_id: f64,
    pub status: String,
    pub output: Option<String>,
    pub created_at: f64,
    pub updated_at: f64,
    pub parent_instance_id: Option<String>,
}

pub(crate) fn instance_info_to_js(i: duroxide::providers::InstanceInfo) -> NativeInstanceInfo {
    NativeInstanceInfo {
        instance_id: i.instance_id,
        orchestration_name: i.orchestration_name,
        orchestration_version: i.orchestration_version,
        current_execution_id: i.current_execution_id as f64,
        status: i.status,
        output: i.output,
        created_at: i.created_at as f64,
        updated_at: i.updated_at as f64,
        parent_instance_id: i.parent_instance_id,
    }
}

#[napi(object)]
pub struct NativeDeleteResult {
    pub instances_deleted: f64,
    pub executions_deleted: f64,
    pub events_deleted: f64,
    pub queue_messages_deleted: f64,
}

/// A dead-lettered message (steadfast-pg's `DeadLetter`). Times are ms since the epoch.
#[napi(object)]
pub struct NativeDeadLetter {
    pub id: f64,
    /// `orchestrator` or `worker`.
    pub queue: String,
    pub instance_id: String,
    pub execution_id: Option<f64>,
    pub activity_id: Option<f64>,
    /// How many times the message had been handed out.
    pub attempt_count: u32,
    pub max_attempts: Option<u32>,
    /// `poison`, `attempt_ceiling` or `undecodable`.
    pub reason: String,
    pub error: Option<String>,
    /// The original serialized work item (JSON text).
    pub work_item: String,
    pub session_id: Option<String>,
    pub tag: Option<String>,
    pub enqueued_at: f64,
    pub dead_at: f64,
}

fn dead_letter_to_js(d: DeadLetter) -> NativeDeadLetter {
    NativeDeadLetter {
        id: d.id as f64,
        queue: d.queue.as_str().to_string(),
        instance_id: d.instance_id,
        execution_id: d.execution_id.map(|v| v as f64),
        activity_id: d.activity_id.map(|v| v as f64),
        attempt_count: d.attempt_count,
        max_attempts: d.max_attempts,
        reason: d.reason,
        error: d.error,
        work_item: d.work_item,
        session_id: d.session_id,
        tag: d.tag,
        enqueued_at: d.enqueued_at_ms as f64,
        dead_at: d.dead_at_ms as f64,
    }
}

/// Backstop for values the JS layer already checked.
pub(crate) fn check_range(name: &str, value: i64, min: i64, max: i64) -> napi::Result<()> {
    if value < min || value > max {
        return Err(error(
            Code::InvalidArgument,
            format!("{name} must be an integer between {min} and {max} (got {value})"),
        ));
    }
    Ok(())
}

/// Largest integer a JS number holds exactly.
pub(crate) const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// A client on one provider.
#[napi]
pub struct NativeClient {
    pub(crate) inner: Client,
    /// steadfast-pg behind `inner`, for the dead-letter API; None on SQLite.
    pub(crate) pg: Option<Arc<PostgresProvider>>,
}

impl NativeClient {
    /// The dead-letter store, or an `Unsupported` error naming the JS method.
    fn dead_letters(&self, method: &str) -> Result<Arc<PostgresProvider>, JsError> {
        self.pg.clone().ok_or_else(|| {
            error(
                Code::Unsupported,
                format!(
                    "client.{method}() is not supported on SQLite: dead letters need the \
                     PostgreSQL provider (steadfast-pg)"
                ),
            )
        })
    }
}

#[napi]
impl NativeClient {
    #[napi(constructor)]
    pub fn new(provider: &NativeProvider) -> Self {
        Self {
            inner: Client::new(provider.store()),
            pg: provider.postgres(),
        }
    }

    #[napi]
    pub async fn start_orchestration(
        &self,
        instance_id: String,
        name: String,
        input: String,
    ) -> napi::Result<()> {
        let c = self.inner.clone();
        guard(async move {
            c.start_orchestration(instance_id, name, input)
                .await
                .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn start_orchestration_versioned(
        &self,
        instance_id: String,
        name: String,
        version: String,
        input: String,
    ) -> napi::Result<()> {
        let c = self.inner.clone();
        guard(async move {
            c.start_orchestration_versioned(instance_id, name, version, input)
                .await
                .map_err(client_error)
        })
        .await
    }

    /// Start the instance only if it does not exist yet, else `ERR_STEADFAST_INSTANCE_EXISTS`.
    /// Atomic on PostgreSQL (concurrent exclusive starts of one id: one succeeds); on SQLite
    /// a status read then a start, so two concurrent callers may both start it (the second
    /// start is then ignored, as a plain start's is).
    #[napi]
    pub async fn start_orchestration_exclusive(
        &self,
        instance_id: String,
        name: String,
        version: Option<String>,
        input: String,
    ) -> napi::Result<()> {
        let c = self.inner.clone();
        let pg = self.pg.clone();
        guard(async move {
            let exists = || {
                error(
                    Code::InstanceExists,
                    format!("instance {instance_id:?} already exists (ifExists: 'throw')"),
                )
            };
            if let Some(pg) = pg {
                let start = duroxide::providers::WorkItem::StartOrchestration {
                    instance: instance_id.clone(),
                    orchestration: name,
                    input,
                    version,
                    parent_instance: None,
                    parent_id: None,
                    parent_execution_id: None,
                    execution_id: duroxide::INITIAL_EXECUTION_ID,
                };
                let enqueued = pg
                    .start_orchestration_exclusive(start)
                    .await
                    .map_err(provider_error)?;
                return if enqueued { Ok(()) } else { Err(exists()) };
            }
            let status = c
                .get_orchestration_status(&instance_id)
                .await
                .map_err(client_error)?;
            if !matches!(status, OrchestrationStatus::NotFound) {
                return Err(exists());
            }
            match version {
                Some(v) => {
                    c.start_orchestration_versioned(&instance_id, name, v, input)
                        .await
                }
                None => c.start_orchestration(&instance_id, name, input).await,
            }
            .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn get_status(&self, instance_id: String) -> napi::Result<NativeStatus> {
        let c = self.inner.clone();
        let pg = self.pg.clone();
        guard(async move {
            // On PostgreSQL one statement instead of the whole history and the custom status.
            let status = match pg {
                Some(pg) => pg
                    .orchestration_status(&instance_id)
                    .await
                    .map_err(duroxide::ClientError::from),
                None => c.get_orchestration_status(&instance_id).await,
            };
            status.map(status_to_js).map_err(client_error)
        })
        .await
    }

    #[napi]
    /// `wait_id`: a wait begun with `beginWait`, so that an `AbortSignal` can end it.
    pub async fn wait_for_orchestration(
        &self,
        instance_id: String,
        timeout_ms: u32,
        wait_id: Option<u32>,
    ) -> napi::Result<NativeStatus> {
        let c = self.inner.clone();
        let pg = self.pg.clone();
        let timeout = Duration::from_millis(timeout_ms.into());
        guard(abortable(wait_id, async move {
            // On PostgreSQL woken by the execution-end notification instead of polling.
            let status = match pg {
                Some(pg) => pg.wait_for_orchestration(&instance_id, timeout).await,
                None => c.wait_for_orchestration(&instance_id, timeout).await,
            };
            status.map(status_to_js).map_err(client_error)
        }))
        .await
    }

    #[napi]
    pub async fn raise_event(
        &self,
        instance_id: String,
        event_name: String,
        data: String,
    ) -> napi::Result<()> {
        let c = self.inner.clone();
        guard(async move {
            c.raise_event(instance_id, event_name, data)
                .await
                .map_err(client_error)
        })
        .await
    }

    /// Send `data` to queue `queue_name` of an instance (read with `ctx.dequeueEvent`).
    #[napi]
    pub async fn enqueue_event(
        &self,
        instance_id: String,
        queue_name: String,
        data: String,
    ) -> napi::Result<()> {
        let c = self.inner.clone();
        guard(async move {
            c.enqueue_event(instance_id, queue_name, data)
                .await
                .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn cancel_instance(&self, instance_id: String, reason: String) -> napi::Result<()> {
        let c = self.inner.clone();
        guard(async move {
            c.cancel_instance(instance_id, reason)
                .await
                .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn list_all_instances(&self) -> napi::Result<Vec<String>> {
        let c = self.inner.clone();
        guard(async move { c.list_all_instances().await.map_err(client_error) }).await
    }

    #[napi]
    pub async fn get_instance_info(&self, instance_id: String) -> napi::Result<NativeInstanceInfo> {
        let c = self.inner.clone();
        guard(async move {
            let i = c
                .get_instance_info(&instance_id)
                .await
                .map_err(client_error)?;
            Ok(instance_info_to_js(i))
        })
        .await
    }

    #[napi]
    pub async fn delete_instance(
        &self,
        instance_id: String,
        force: bool,
    ) -> napi::Result<NativeDeleteResult> {
        let c = self.inner.clone();
        guard(async move {
            c.delete_instance(&instance_id, force)
                .await
                .map(delete_result_to_js)
                .map_err(client_error)
        })
        .await
    }

    /// Dead letters in id order (PostgreSQL only): ids greater than `afterId`, at most
    /// `limit` (1–10000), optionally only `instanceId`'s.
    #[napi]
    pub async fn list_dead_letters(
        &self,
        instance_id: Option<String>,
        after_id: i64,
        limit: u32,
    ) -> napi::Result<Vec<NativeDeadLetter>> {
        let pg = self.dead_letters("listDeadLetters");
        guard(async move {
            let pg = pg?;
            check_range("afterId", after_id, 0, MAX_SAFE_INTEGER)?;
            check_range("limit", limit.into(), 1, MAX_DEAD_LETTER_PAGE.into())?;
            let filter = DeadLetterFilter {
                instance_id,
                after_id,
                limit: Some(limit),
                dead_before_ms: None,
            };
            let letters = pg
                .list_dead_letters(&filter)
                .await
                .map_err(provider_error)?;
            Ok(letters.into_iter().map(dead_letter_to_js).collect())
        })
        .await
    }

    /// One dead letter, or null (PostgreSQL only).
    #[napi]
    pub async fn get_dead_letter(&self, id: i64) -> napi::Result<Option<NativeDeadLetter>> {
        let pg = self.dead_letters("getDeadLetter");
        guard(async move {
            let pg = pg?;
            check_range("id", id, 1, MAX_SAFE_INTEGER)?;
            let letter = pg.get_dead_letter(id).await.map_err(provider_error)?;
            Ok(letter.map(dead_letter_to_js))
        })
        .await
    }

    /// Put a dead letter back on its queue with a fresh attempt budget and remove it from
    /// the store, atomically (PostgreSQL only). False when there is no such dead letter.
    #[napi]
    pub async fn requeue_dead_letter(&self, id: i64) -> napi::Result<bool> {
        let pg = self.dead_letters("requeueDeadLetter");
        guard(async move {
            let pg = pg?;
            check_range("id", id, 1, MAX_SAFE_INTEGER)?;
            pg.requeue_dead_letter(id).await.map_err(provider_error)
        })
        .await
    }

    /// Delete dead letters, optionally only `instanceId`'s and only those dead before
    /// `deadBeforeMs` (ms since the epoch); PostgreSQL only. Returns how many.
    #[napi]
    pub async fn purge_dead_letters(
        &self,
        instance_id: Option<String>,
        dead_before_ms: Option<i64>,
    ) -> napi::Result<f64> {
        let pg = self.dead_letters("purgeDeadLetters");
        guard(async move {
            let pg = pg?;
            if let Some(ms) = dead_before_ms {
                check_range("deadBeforeMs", ms, 0, MAX_SAFE_INTEGER)?;
            }
            let filter = DeadLetterFilter {
                instance_id,
                dead_before_ms: dead_before_ms.map(|ms| ms as u64),
                ..DeadLetterFilter::default()
            };
            let purged = pg
                .purge_dead_letters(&filter)
                .await
                .map_err(provider_error)?;
            Ok(purged as f64)
        })
        .await
    }
}
