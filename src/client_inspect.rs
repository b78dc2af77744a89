//! Read-only client operations: status changes, KV reads, metrics, queue depths, instance
//! and execution listings, history and instance trees. The JS layer (`lib/client.js`)
//! validates arguments first; the range checks here are the backstop.

use std::collections::HashMap;
use std::time::Duration;

use duroxide::ClientError;
use napi_derive::napi;

use crate::client::{MAX_SAFE_INTEGER, NativeClient, NativeStatus, check_range, status_to_js};
use crate::client_waits::abortable;
use crate::errors::{client_error, guard};
use crate::history::{NativeEvent, event_to_js};

#[napi(object)]
pub struct NativeSystemMetrics {
    pub total_instances: f64,
    pub total_executions: f64,
    pub running_instances: f64,
    pub completed_instances: f64,
    pub failed_instances: f64,
    pub total_events: f64,
}

#[napi(object)]
pub struct NativeQueueDepths {
    pub orchestrator_queue: f64,
    pub worker_queue: f64,
    pub timer_queue: f64,
}

#[napi(object)]
pub struct NativeInstanceStats {
    pub history_event_count: f64,
    pub history_size_bytes: f64,
    pub queue_pending_count: f64,
    pub kv_user_key_count: f64,
    pub kv_total_value_bytes: f64,
}

#[napi(object)]
pub struct NativeExecutionInfo {
    pub execution_id: f64,
    /// `Running`, `Completed`, `Failed` or `ContinuedAsNew`.
    pub status: String,
    /// Output, error or next input (JSON text when it is JSON), when terminal.
    pub output: Option<String>,
    pub started_at: f64,
    pub completed_at: Option<f64>,
    pub event_count: f64,
}

#[napi(object)]
pub struct NativeInstanceTree {
    pub root_id: String,
    pub all_ids: Vec<String>,
    pub size: f64,
}

fn execution_id(value: i64) -> napi::Result<u64> {
    check_range("executionId", value, 1, MAX_SAFE_INTEGER)?;
    Ok(value as u64)
}

#[napi]
impl NativeClient {
    /// Wait until the custom-status version exceeds `lastSeenVersion` or the instance is
    /// terminal; rejects with a timeout error after `timeoutMs`.
    #[napi]
    pub async fn wait_for_status_change(
        &self,
        instance_id: String,
        last_seen_version: i64,
        poll_interval_ms: u32,
        timeout_ms: u32,
        wait_id: Option<u32>,
    ) -> napi::Result<NativeStatus> {
        let c = self.inner.clone();
        guard(abortable(wait_id, async move {
            check_range("lastSeenVersion", last_seen_version, 0, MAX_SAFE_INTEGER)?;
            check_range(
                "pollIntervalMs",
                poll_interval_ms.into(),
                1,
                u32::MAX.into(),
            )?;
            c.wait_for_status_change(
                &instance_id,
                last_seen_version as u64,
                Duration::from_millis(poll_interval_ms.into()),
                Duration::from_millis(timeout_ms.into()),
            )
            .await
            .map(status_to_js)
            .map_err(client_error)
        }))
        .await
    }

    #[napi]
    pub async fn get_value(
        &self,
        instance_id: String,
        key: String,
    ) -> napi::Result<Option<String>> {
        let c = self.inner.clone();
        guard(async move {
            c.get_kv_value(&instance_id, &key)
                .await
                .map_err(client_error)
        })
        .await
    }

    /// The value once the key exists, or null when `timeoutMs` passes first.
    #[napi]
    pub async fn wait_for_value(
        &self,
        instance_id: String,
        key: String,
        timeout_ms: u32,
        wait_id: Option<u32>,
    ) -> napi::Result<Option<String>> {
        let c = self.inner.clone();
        guard(abortable(wait_id, async move {
            let wait = Duration::from_millis(timeout_ms.into());
            match c.wait_for_kv_value(&instance_id, &key, wait).await {
                Ok(v) => Ok(Some(v)),
                Err(ClientError::Timeout) => Ok(None),
                Err(e) => Err(client_error(e)),
            }
        }))
        .await
    }

    #[napi]
    pub async fn get_kv_all_values(
        &self,
        instance_id: String,
    ) -> napi::Result<HashMap<String, String>> {
        let c = self.inner.clone();
        guard(async move {
            c.get_kv_all_values(&instance_id)
                .await
                .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn get_system_metrics(&self) -> napi::Result<NativeSystemMetrics> {
        let c = self.inner.clone();
        guard(async move {
            let m = c.get_system_metrics().await.map_err(client_error)?;
            Ok(NativeSystemMetrics {
                total_instances: m.total_instances as f64,
                total_executions: m.total_executions as f64,
                running_instances: m.running_instances as f64,
                completed_instances: m.completed_instances as f64,
                failed_instances: m.failed_instances as f64,
                total_events: m.total_events as f64,
            })
        })
        .await
    }

    #[napi]
    pub async fn get_queue_depths(&self) -> napi::Result<NativeQueueDepths> {
        let c = self.inner.clone();
        guard(async move {
            let d = c.get_queue_depths().await.map_err(client_error)?;
            Ok(NativeQueueDepths {
                orchestrator_queue: d.orchestrator_queue as f64,
                worker_queue: d.worker_queue as f64,
                timer_queue: d.timer_queue as f64,
            })
        })
        .await
    }

    /// Size of an instance's history, queue and KV store; null for an unknown instance.
    #[napi]
    pub async fn get_orchestration_stats(
        &self,
        instance_id: String,
    ) -> napi::Result<Option<NativeInstanceStats>> {
        let c = self.inner.clone();
        guard(async move {
            let s = c
                .get_orchestration_stats(&instance_id)
                .await
                .map_err(client_error)?;
            Ok(s.map(|s| NativeInstanceStats {
                history_event_count: s.history_event_count as f64,
                history_size_bytes: s.history_size_bytes as f64,
                queue_pending_count: s.queue_pending_count as f64,
                kv_user_key_count: s.kv_user_key_count as f64,
                kv_total_value_bytes: s.kv_total_value_bytes as f64,
            }))
        })
        .await
    }

    #[napi]
    pub async fn list_instances_by_status(&self, status: String) -> napi::Result<Vec<String>> {
        let c = self.inner.clone();
        guard(async move {
            c.list_instances_by_status(&status)
                .await
                .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn list_executions(&self, instance_id: String) -> napi::Result<Vec<f64>> {
        let c = self.inner.clone();
        guard(async move {
            let ids = c
                .list_executions(&instance_id)
                .await
                .map_err(client_error)?;
            Ok(ids.into_iter().map(|id| id as f64).collect())
        })
        .await
    }

    #[napi]
    pub async fn get_execution_info(
        &self,
        instance_id: String,
        execution_id: i64,
    ) -> napi::Result<NativeExecutionInfo> {
        let c = self.inner.clone();
        guard(async move {
            let id = self::execution_id(execution_id)?;
            let e = c
                .get_execution_info(&instance_id, id)
                .await
                .map_err(client_error)?;
            Ok(NativeExecutionInfo {
                execution_id: e.execution_id as f64,
                status: e.status,
                output: e.output,
                started_at: e.started_at as f64,
                completed_at: e.completed_at.map(|v| v as f64),
                event_count: e.event_count as f64,
            })
        })
        .await
    }

    #[napi]
    pub async fn read_execution_history(
        &self,
        instance_id: String,
        execution_id: i64,
    ) -> napi::Result<Vec<NativeEvent>> {
        let c = self.inner.clone();
        guard(async move {
            let id = self::execution_id(execution_id)?;
            let events = c
                .read_execution_history(&instance_id, id)
                .await
                .map_err(client_error)?;
            Ok(events.into_iter().map(event_to_js).collect())
        })
        .await
    }

    #[napi]
    pub async fn get_instance_tree(&self, instance_id: String) -> napi::Result<NativeInstanceTree> {
        let c = self.inner.clone();
        guard(async move {
            let t = c
                .get_instance_tree(&instance_id)
                .await
                .map_err(client_error)?;
            let size = t.size() as f64;
            Ok(NativeInstanceTree {
                root_id: t.root_id,
                all_ids: t.all_ids,
                size,
            })
        })
        .await
    }
}
