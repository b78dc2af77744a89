//! An orchestration's status in one statement.

use duroxide::providers::ProviderError;
use duroxide::{Event, EventKind, OrchestrationStatus};
use sqlx::Row;

use crate::error::db_error;
use crate::provider::PostgresProvider;
use crate::run::RunQuery;

impl PostgresProvider {
    /// The status duroxide's `Client::get_orchestration_status` reports for `instance`
    /// (completed or failed by the latest execution's last such event, running once it has
    /// a start event, not found otherwise; custom status alongside), read in one statement
    /// (`queries/orchestration_status.sql`) instead of the whole history and the custom
    /// status apart. `wait_for_orchestration` reads it at every check.
    pub async fn orchestration_status(
        &self,
        instance: &str,
    ) -> Result<OrchestrationStatus, ProviderError> {
        const OP: &str = "get_orchestration_status";
        let row = self
            .query(&self.q.orchestration_status)
            .bind(instance)
            .fetch_one_on(self, OP)
            .await?;
        let terminal: Option<String> = row.try_get(0).map_err(|e| db_error(OP, e))?;
        let started: bool = row.try_get(1).map_err(|e| db_error(OP, e))?;
        let version: i64 = row.try_get(3).map_err(|e| db_error(OP, e))?;
        // As duroxide's read: a custom status only once one was set (version > 0).
        let (custom_status, custom_status_version) = if version > 0 {
            let status: Option<String> = row.try_get(2).map_err(|e| db_error(OP, e))?;
            (status, version as u64)
        } else {
            (None, 0)
        };
        let Some(text) = terminal else {
            return Ok(if started {
                OrchestrationStatus::Running {
                    custom_status,
                    custom_status_version,
                }
            } else {
                OrchestrationStatus::NotFound
            });
        };
        let event: Event = serde_json::from_str(&text).map_err(|e| {
            ProviderError::permanent(
                OP,
                format!("failed to deserialize the terminal event of instance '{instance}': {e}"),
            )
        })?;
        match event.kind {
            EventKind::OrchestrationCompleted { output } => Ok(OrchestrationStatus::Completed {
                output,
                custom_status,
                custom_status_version,
            }),
            EventKind::OrchestrationFailed { details } => Ok(OrchestrationStatus::Failed {
                details,
                custom_status,
                custom_status_version,
            }),
            other => Err(ProviderError::permanent(
                OP,
                format!(
                    "history of instance '{instance}' has an event typed as terminal that is not: {other:?}"
                ),
            )),
        }
    }
}
