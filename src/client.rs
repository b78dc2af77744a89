//! The management/control client. Inputs and outputs are JSON text; the JS layer encodes
//! and parses.

use std::time::Duration;

use duroxide::{Client, OrchestrationStatus};
use napi_derive::napi;

use crate::errors::{client_error, guard};
use crate::providers::NativeProvider;

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

#[napi(object)]
pub struct NativeDeleteResult {
    pub instances_deleted: f64,
    pub executions_deleted: f64,
    pub events_deleted: f64,
    pub queue_messages_deleted: f64,
}

/// A client on one provider.
#[napi]
pub struct NativeClient {
    pub(crate) inner: Client,
}

#[napi]
impl NativeClient {
    #[napi(constructor)]
    pub fn new(provider: &NativeProvider) -> Self {
        Self {
            inner: Client::new(provider.store()),
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

    #[napi]
    pub async fn get_status(&self, instance_id: String) -> napi::Result<NativeStatus> {
        let c = self.inner.clone();
        guard(async move {
            c.get_orchestration_status(&instance_id)
                .await
                .map(status_to_js)
                .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn wait_for_orchestration(
        &self,
        instance_id: String,
        timeout_ms: u32,
    ) -> napi::Result<NativeStatus> {
        let c = self.inner.clone();
        guard(async move {
            c.wait_for_orchestration(&instance_id, Duration::from_millis(timeout_ms.into()))
                .await
                .map(status_to_js)
                .map_err(client_error)
        })
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
            Ok(NativeInstanceInfo {
                instance_id: i.instance_id,
                orchestration_name: i.orchestration_name,
                orchestration_version: i.orchestration_version,
                current_execution_id: i.current_execution_id as f64,
                status: i.status,
                output: i.output,
                created_at: i.created_at as f64,
                updated_at: i.updated_at as f64,
                parent_instance_id: i.parent_instance_id,
            })
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
            let r = c
                .delete_instance(&instance_id, force)
                .await
                .map_err(client_error)?;
            Ok(NativeDeleteResult {
                instances_deleted: r.instances_deleted as f64,
                executions_deleted: r.executions_deleted as f64,
                events_deleted: r.events_deleted as f64,
                queue_messages_deleted: r.queue_messages_deleted as f64,
            })
        })
        .await
    }
}
