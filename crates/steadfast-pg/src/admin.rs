//! `ProviderAdmin`: inspection, deletion and pruning.
//!
//! Rules this module keeps:
//! - every statement is a named query (`queries/admin_*.sql`); lists are bound as arrays;
//! - a deletion first locks the instances' lease rows (sorted, `FOR UPDATE`), because
//!   every writer of an instance's orchestrator-queue rows holds that lock; its guards
//!   (Running, orphans) run after the lock, inside the same transaction;
//! - deleting an instance removes its lease row too, so any lock token handed out for it
//!   is dead and an in-flight ack cannot recreate the instance; dead letters are kept;
//! - pruning never removes the current execution, anything newer, a Running execution,
//!   or KV state.

use duroxide::Event;
use duroxide::providers::{
    DeleteInstanceResult, ExecutionInfo, InstanceFilter, InstanceInfo, InstanceTree, ProviderAdmin,
    ProviderError, PruneOptions, PruneResult, QueueDepths, SystemMetrics,
};
use sqlx::Row;
use sqlx::postgres::PgRow;

use crate::error::db_error;
use crate::provider::PostgresProvider;
use crate::run::{RunQuery, RunScalar};

crate::queries::named_queries!(pub(crate) struct AdminQueries {
    admin_list_instances,
    admin_list_instances_by_status,
    admin_list_executions,
    admin_latest_execution_id,
    admin_execution_info,
    admin_system_metrics,
    admin_queue_depths,
    admin_list_children,
    admin_parent_id,
    admin_instance_tree,
    admin_lock_leases,
    admin_running_among,
    admin_orphan_among,
    admin_delete_instances,
    admin_bulk_delete_roots,
    admin_prune_targets,
    admin_prune_executions,
    admin_instances_page,
    // also read by `steadfast doctor` (lib/doctor/queries.js)
    doctor_queues,
    doctor_dead_letters,
});

/// Instances selected per bulk call when the filter sets no limit.
const DEFAULT_BULK_LIMIT: u32 = 1000;

const DELETE_ATOMIC: &str = "delete_instances_atomic";
const DELETE_BULK: &str = "delete_instance_bulk";
const PRUNE: &str = "prune_executions";
const PRUNE_BULK: &str = "prune_executions_bulk";

/// Why a deletion was refused after its guards ran (the transaction is rolled back).
enum Refusal {
    /// This instance's current execution is Running and force was not given.
    Running(String),
    /// Deleting the batch would orphan `child` of `parent`.
    Orphan { child: String, parent: String },
}

impl Refusal {
    fn into_error(self, operation: &str) -> ProviderError {
        match self {
            Refusal::Running(id) => ProviderError::permanent(
                operation,
                format!(
                    "instance {id} is still running; cancel it first or delete with force=true"
                ),
            ),
            Refusal::Orphan { child, parent } => ProviderError::permanent(
                operation,
                format!(
                    "cannot delete: instance {parent} has child {child} that is not part of the \
                     deletion (it would be orphaned); re-read the instance tree and retry"
                ),
            ),
        }
    }
}

/// A database count (never negative) as u64.
fn count(row: &PgRow, column: &str, operation: &str) -> Result<u64, ProviderError> {
    let n: i64 = row.try_get(column).map_err(|e| db_error(operation, e))?;
    Ok(n.max(0) as u64)
}

/// A database timestamp in epoch ms (never negative) as u64.
fn millis(ms: i64) -> u64 {
    ms.max(0) as u64
}

/// An execution id for binding; ids beyond i64 cannot exist in the table.
fn execution_param(execution_id: u64) -> i64 {
    i64::try_from(execution_id).unwrap_or(i64::MAX)
}

/// A millisecond cutoff for binding as `float8` (the form the SQL compares with).
fn cutoff_param(ms: Option<u64>) -> Option<f64> {
    ms.map(|ms| ms as f64)
}

fn strings(rows: Vec<PgRow>, operation: &str) -> Result<Vec<String>, ProviderError> {
    rows.iter()
        .map(|r| {
            r.try_get::<String, _>(0)
                .map_err(|e| db_error(operation, e))
        })
        .collect()
}

fn add_deleted(total: &mut DeleteInstanceResult, part: &DeleteInstanceResult) {
    total.instances_deleted += part.instances_deleted;
    total.executions_deleted += part.executions_deleted;
    total.events_deleted += part.events_deleted;
    total.queue_messages_deleted += part.queue_messages_deleted;
}

impl PostgresProvider {
    /// Delete `ids` in one transaction: lock their lease rows, run the guards, then
    /// remove everything. A refusal rolls back and is returned as `Ok(Err(_))` so bulk
    /// callers can skip instead of failing.
    async fn delete_batch(
        &self,
        ids: &[String],
        force: bool,
        operation: &str,
    ) -> Result<Result<DeleteInstanceResult, Refusal>, ProviderError> {
        let q = &self.admin_q;
        let mut tx = self.begin(operation).await?;
        self.query(&q.admin_lock_leases)
            .bind(ids)
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| db_error(operation, e))?;

        if !force {
            let running: Option<String> = self
                .scalar(&q.admin_running_among)
                .bind(ids)
                .fetch_optional(&mut *tx)
                .await
                .map_err(|e| db_error(operation, e))?;
            if let Some(id) = running {
                return Ok(Err(Refusal::Running(id)));
            }
        }

        let orphan = self
            .query(&q.admin_orphan_among)
            .bind(ids)
            .fetch_optional(&mut *tx)
            .await
            .map_err(|e| db_error(operation, e))?;
        if let Some(row) = orphan {
            let child: String = row.try_get(0).map_err(|e| db_error(operation, e))?;
            let parent: String = row.try_get(1).map_err(|e| db_error(operation, e))?;
            return Ok(Err(Refusal::Orphan { child, parent }));
        }

        let row = self
            .query(&q.admin_delete_instances)
            .bind(ids)
            .fetch_one(&mut *tx)
            .await
            .map_err(|e| db_error(operation, e))?;
        let result = DeleteInstanceResult {
            instances_deleted: count(&row, "instances", operation)?,
            executions_deleted: count(&row, "executions", operation)?,
            events_deleted: count(&row, "events", operation)?,
            queue_messages_deleted: count(&row, "queue_messages", operation)?,
        };
        tx.commit().await.map_err(|e| db_error(operation, e))?;
        Ok(Ok(result))
    }

    /// Prune executions of `ids` in one atomic statement. `instances_processed` counts
    /// the ids that exist.
    async fn prune_batch(
        &self,
        ids: &[String],
        options: &PruneOptions,
        operation: &str,
    ) -> Result<PruneResult, ProviderError> {
        let row = self
            .query(&self.admin_q.admin_prune_executions)
            .bind(ids)
            .bind(options.keep_last.map(i64::from))
            .bind(cutoff_param(options.completed_before))
            .fetch_one_on(self, operation)
            .await?;
        Ok(PruneResult {
            instances_processed: count(&row, "instances", operation)?,
            executions_deleted: count(&row, "executions", operation)?,
            events_deleted: count(&row, "events", operation)?,
        })
    }
}

/// An instance's row as `admin_instances_page` selects it.
pub(crate) fn instance_info(row: &PgRow, op: &str) -> Result<InstanceInfo, ProviderError> {
    let get = |e| db_error(op, e);
    Ok(InstanceInfo {
        instance_id: row.try_get("instance_id").map_err(get)?,
        orchestration_name: row.try_get("orchestration_name").map_err(get)?,
        orchestration_version: row.try_get("orchestration_version").map_err(get)?,
        current_execution_id: row
            .try_get::<i64, _>("current_execution_id")
            .map_err(get)?
            .max(0) as u64,
        status: row.try_get("status").map_err(get)?,
        output: row.try_get("output").map_err(get)?,
        created_at: millis(row.try_get("created_at_ms").map_err(get)?),
        updated_at: millis(row.try_get("updated_at_ms").map_err(get)?),
        parent_instance_id: row.try_get("parent_instance_id").map_err(get)?,
    })
}

#[async_trait::async_trait]
impl ProviderAdmin for PostgresProvider {
    async fn list_instances(&self) -> Result<Vec<String>, ProviderError> {
        const OP: &str = "list_instances";
        let rows = self
            .query(&self.admin_q.admin_list_instances)
            .fetch_all_on(self, OP)
            .await?;
        strings(rows, OP)
    }

    async fn list_instances_by_status(&self, status: &str) -> Result<Vec<String>, ProviderError> {
        const OP: &str = "list_instances_by_status";
        let rows = self
            .query(&self.admin_q.admin_list_instances_by_status)
            .bind(status)
            .fetch_all_on(self, OP)
            .await?;
        strings(rows, OP)
    }

    async fn list_executions(&self, instance: &str) -> Result<Vec<u64>, ProviderError> {
        const OP: &str = "list_executions";
        let ids: Vec<i64> = self
            .scalar(&self.admin_q.admin_list_executions)
            .bind(instance)
            .fetch_all_on(self, OP)
            .await?;
        Ok(ids.into_iter().map(|id| id.max(0) as u64).collect())
    }

    async fn read_history_with_execution_id(
        &self,
        instance: &str,
        execution_id: u64,
    ) -> Result<Vec<Event>, ProviderError> {
        self.read_execution(instance, execution_id, "read_history_with_execution_id")
            .await
    }

    async fn read_history(&self, instance: &str) -> Result<Vec<Event>, ProviderError> {
        self.read_latest_execution(instance, "read_history").await
    }

    async fn latest_execution_id(&self, instance: &str) -> Result<u64, ProviderError> {
        const OP: &str = "latest_execution_id";
        let id: i64 = self
            .scalar(&self.admin_q.admin_latest_execution_id)
            .bind(instance)
            .fetch_one_on(self, OP)
            .await?;
        Ok(id.max(1) as u64)
    }

    async fn get_instance_info(&self, instance: &str) -> Result<InstanceInfo, ProviderError> {
        const OP: &str = "get_instance_info";
        let row = self.instance_row(instance, OP).await?.ok_or_else(|| {
            ProviderError::permanent(OP, format!("Instance {instance} not found"))
        })?;
        instance_info(&row, OP)
    }

    async fn get_execution_info(
        &self,
        instance: &str,
        execution_id: u64,
    ) -> Result<ExecutionInfo, ProviderError> {
        const OP: &str = "get_execution_info";
        let row = self
            .query(&self.admin_q.admin_execution_info)
            .bind(instance)
            .bind(execution_param(execution_id))
            .fetch_optional_on(self, OP)
            .await?
            .ok_or_else(|| {
                ProviderError::permanent(
                    OP,
                    format!("Execution {execution_id} of instance {instance} not found"),
                )
            })?;
        let get = |e| db_error(OP, e);
        Ok(ExecutionInfo {
            execution_id: row.try_get::<i64, _>("execution_id").map_err(get)?.max(0) as u64,
            status: row.try_get("status").map_err(get)?,
            output: row.try_get("output").map_err(get)?,
            started_at: millis(row.try_get("started_at_ms").map_err(get)?),
            completed_at: row
                .try_get::<Option<i64>, _>("completed_at_ms")
                .map_err(get)?
                .map(millis),
            event_count: count(&row, "event_count", OP)? as usize,
        })
    }

    async fn get_system_metrics(&self) -> Result<SystemMetrics, ProviderError> {
        const OP: &str = "get_system_metrics";
        let row = self
            .query(&self.admin_q.admin_system_metrics)
            .fetch_one_on(self, OP)
            .await?;
        Ok(SystemMetrics {
            total_instances: count(&row, "total_instances", OP)?,
            total_executions: count(&row, "total_executions", OP)?,
            running_instances: count(&row, "running_instances", OP)?,
            completed_instances: count(&row, "completed_instances", OP)?,
            failed_instances: count(&row, "failed_instances", OP)?,
            total_events: count(&row, "total_events", OP)?,
        })
    }

    async fn get_queue_depths(&self) -> Result<QueueDepths, ProviderError> {
        const OP: &str = "get_queue_depths";
        let row = self
            .query(&self.admin_q.admin_queue_depths)
            .fetch_one_on(self, OP)
            .await?;
        Ok(QueueDepths {
            orchestrator_queue: count(&row, "orchestrator", OP)? as usize,
            worker_queue: count(&row, "worker", OP)? as usize,
            // Timers are delayed orchestrator messages; there is no timer queue.
            timer_queue: 0,
        })
    }

    async fn list_children(&self, instance_id: &str) -> Result<Vec<String>, ProviderError> {
        const OP: &str = "list_children";
        let rows = self
            .query(&self.admin_q.admin_list_children)
            .bind(instance_id)
            .fetch_all_on(self, OP)
            .await?;
        strings(rows, OP)
    }

    async fn get_parent_id(&self, instance_id: &str) -> Result<Option<String>, ProviderError> {
        const OP: &str = "get_parent_id";
        let parent: Option<Option<String>> = self
            .scalar(&self.admin_q.admin_parent_id)
            .bind(instance_id)
            .fetch_optional_on(self, OP)
            .await?;
        parent.ok_or_else(|| {
            ProviderError::permanent(OP, format!("Instance {instance_id} not found"))
        })
    }

    async fn get_instance_tree(&self, instance_id: &str) -> Result<InstanceTree, ProviderError> {
        const OP: &str = "get_instance_tree";
        let rows = self
            .query(&self.admin_q.admin_instance_tree)
            .bind(instance_id)
            .fetch_all_on(self, OP)
            .await?;
        Ok(InstanceTree {
            root_id: instance_id.to_string(),
            all_ids: strings(rows, OP)?,
        })
    }

    async fn delete_instances_atomic(
        &self,
        ids: &[String],
        force: bool,
    ) -> Result<DeleteInstanceResult, ProviderError> {
        if ids.is_empty() {
            return Ok(DeleteInstanceResult::default());
        }
        self.delete_batch(ids, force, DELETE_ATOMIC)
            .await?
            .map_err(|refusal| refusal.into_error(DELETE_ATOMIC))
    }

    async fn delete_instance_bulk(
        &self,
        filter: InstanceFilter,
    ) -> Result<DeleteInstanceResult, ProviderError> {
        if filter
            .instance_ids
            .as_ref()
            .is_some_and(|ids| ids.is_empty())
        {
            return Ok(DeleteInstanceResult::default());
        }
        let rows = self
            .query(&self.admin_q.admin_bulk_delete_roots)
            .bind(filter.instance_ids.as_deref())
            .bind(cutoff_param(filter.completed_before))
            .bind(i64::from(filter.limit.unwrap_or(DEFAULT_BULK_LIMIT)))
            .fetch_all_on(self, DELETE_BULK)
            .await?;
        let roots = strings(rows, DELETE_BULK)?;

        // One transaction per tree keeps each short; a tree is all-or-nothing.
        let mut total = DeleteInstanceResult::default();
        for root in &roots {
            let tree = self.get_instance_tree(root).await?;
            match self.delete_batch(&tree.all_ids, false, DELETE_BULK).await? {
                Ok(deleted) => add_deleted(&mut total, &deleted),
                // A Running descendant (or one that appeared since the tree was read):
                // the whole tree is skipped silently, as the contract asks for running work.
                Err(Refusal::Running(id)) => {
                    tracing::debug!(target: "steadfast_pg", root = %root, running = %id,
                        "bulk delete skipped a tree with a running instance");
                }
                Err(Refusal::Orphan { child, .. }) => {
                    tracing::debug!(target: "steadfast_pg", root = %root, child = %child,
                        "bulk delete skipped a tree that changed while being deleted");
                }
            }
        }
        Ok(total)
    }

    async fn prune_executions(
        &self,
        instance_id: &str,
        options: PruneOptions,
    ) -> Result<PruneResult, ProviderError> {
        let ids = [instance_id.to_string()];
        let result = self.prune_batch(&ids, &options, PRUNE).await?;
        if result.instances_processed == 0 {
            return Err(ProviderError::permanent(
                PRUNE,
                format!("Instance {instance_id} not found"),
            ));
        }
        Ok(result)
    }

    async fn prune_executions_bulk(
        &self,
        filter: InstanceFilter,
        options: PruneOptions,
    ) -> Result<PruneResult, ProviderError> {
        if filter
            .instance_ids
            .as_ref()
            .is_some_and(|ids| ids.is_empty())
        {
            return Ok(PruneResult::default());
        }
        let rows = self
            .query(&self.admin_q.admin_prune_targets)
            .bind(filter.instance_ids.as_deref())
            .bind(cutoff_param(filter.completed_before))
            .bind(i64::from(filter.limit.unwrap_or(DEFAULT_BULK_LIMIT)))
            .fetch_all_on(self, PRUNE_BULK)
            .await?;
        let ids = strings(rows, PRUNE_BULK)?;
        if ids.is_empty() {
            return Ok(PruneResult::default());
        }
        self.prune_batch(&ids, &options, PRUNE_BULK).await
    }
}
