//! Client operations that delete: bulk deletion and execution pruning. The JS layer validates arguments first; the checks here are the
//! backstop.

use duroxide::{DeleteInstanceResult, InstanceFilter, PruneOptions, PruneResult};
use napi_derive::napi;

use crate::client::{MAX_SAFE_INTEGER, NativeClient, NativeDeleteResult, check_range};
use crate::errors::{client_error, guard};

/// Which instances a bulk operation selects (all criteria ANDed).
#[napi(object)]
pub struct NativeInstanceFilter {
    pub instance_ids: Option<Vec<String>>,
    /// Only instances whose current execution completed before this time (ms since the epoch).
    pub completed_before: Option<i64>,
    /// At most this many instances (duroxide's default: 1000).
    pub limit: Option<u32>,
}

/// Which executions `pruneExecutions` deletes (the current execution never is).
#[napi(object)]
pub struct NativePruneOptions {
    pub keep_last: Option<u32>,
    pub completed_before: Option<i64>,
}

#[napi(object)]
pub struct NativePruneResult {
    pub instances_processed: f64,
    pub executions_deleted: f64,
    pub events_deleted: f64,
}

pub(crate) fn delete_result_to_js(r: DeleteInstanceResult) -> NativeDeleteResult {
    NativeDeleteResult {
        instances_deleted: r.instances_deleted as f64,
        executions_deleted: r.executions_deleted as f64,
        events_deleted: r.events_deleted as f64,
        queue_messages_deleted: r.queue_messages_deleted as f64,
    }
}

fn prune_result_to_js(r: PruneResult) -> NativePruneResult {
    NativePruneResult {
        instances_processed: r.instances_processed as f64,
        executions_deleted: r.executions_deleted as f64,
        events_deleted: r.events_deleted as f64,
    }
}

fn completed_before(value: Option<i64>) -> napi::Result<Option<u64>> {
    match value {
        Some(ms) => {
            check_range("completedBefore", ms, 0, MAX_SAFE_INTEGER)?;
            Ok(Some(ms as u64))
        }
        None => Ok(None),
    }
}

fn instance_filter(f: NativeInstanceFilter) -> napi::Result<InstanceFilter> {
    Ok(InstanceFilter {
        instance_ids: f.instance_ids,
        completed_before: completed_before(f.completed_before)?,
        limit: f.limit,
    })
}

fn prune_options(o: NativePruneOptions) -> napi::Result<PruneOptions> {
    Ok(PruneOptions {
        keep_last: o.keep_last,
        completed_before: completed_before(o.completed_before)?,
    })
}

#[napi]
impl NativeClient {
    #[napi]
    pub async fn delete_instance_bulk(
        &self,
        filter: NativeInstanceFilter,
    ) -> napi::Result<NativeDeleteResult> {
        let c = self.inner.clone();
        guard(async move {
            let filter = instance_filter(filter)?;
            c.delete_instance_bulk(filter)
                .await
                .map(delete_result_to_js)
                .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn prune_executions(
        &self,
        instance_id: String,
        options: NativePruneOptions,
    ) -> napi::Result<NativePruneResult> {
        let c = self.inner.clone();
        guard(async move {
            let options = prune_options(options)?;
            c.prune_executions(&instance_id, options)
                .await
                .map(prune_result_to_js)
                .map_err(client_error)
        })
        .await
    }

    #[napi]
    pub async fn prune_executions_bulk(
        &self,
        filter: NativeInstanceFilter,
        options: NativePruneOptions,
    ) -> napi::Result<NativePruneResult> {
        let c = self.inner.clone();
        guard(async move {
            let filter = instance_filter(filter)?;
            let options = prune_options(options)?;
            c.prune_executions_bulk(filter, options)
                .await
                .map(prune_result_to_js)
                .map_err(client_error)
        })
        .await
    }
}
