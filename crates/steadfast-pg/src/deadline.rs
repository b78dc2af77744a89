//! Turn and activity deadlines (`ClaimOptions::max_turn_duration`,
//! `ClaimOptions::max_activity_duration`): the renewal statements stop extending a lease
//! that far past its claim (`queries/orch_lease_renew.sql`, `queries/worker_renew.sql`).
//! This is the refusal they then give, logged once per refusal. A claim's first lease never
//! runs past the deadline either ([`first_lease`]): a renewal refused at the deadline must
//! find the lease already over, because duroxide answers the refusal of an activity's
//! renewal by acking its work item with no result, which would delete a work item whose
//! lease still ran (its orchestration would then wait for the activity for ever).

use std::time::Duration;

use duroxide::providers::ProviderError;

pub(crate) fn reached(
    operation: &str,
    what: &'static str,
    option: &str,
    deadline: Option<Duration>,
    instance: Option<&str>,
) -> ProviderError {
    let ms = deadline.map_or(0, |d| d.as_millis());
    crate::metrics::lease_deadline_reached(what);
    tracing::warn!(
        target: "steadfast_pg",
        event = "steadfast.lease_deadline_reached",
        instance_id = instance.unwrap_or(""),
        deadline_ms = ms as u64,
        "a {what} held its lease for {option} ({ms} ms): renewals stop, the lease lapses and the work is redelivered with the attempt counted"
    );
    ProviderError::permanent(
        operation,
        format!(
            "the {what} reached its deadline ({option} = {ms} ms); the lease is no longer renewed"
        ),
    )
}

/// The lease a claim stamps: the lock timeout, cut at the deadline.
pub(crate) fn first_lease(lock_timeout: Duration, deadline: Option<Duration>) -> Duration {
    deadline.map_or(lock_timeout, |d| lock_timeout.min(d))
}
