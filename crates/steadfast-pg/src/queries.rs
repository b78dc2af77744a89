//! Named SQL: every statement lives in `queries/<name>.sql`, written against the
//! `__SCHEMA__` placeholder and rendered once per provider with the quoted schema.

/// Declare a struct with one rendered SQL string per named query file.
macro_rules! named_queries {
    ($vis:vis struct $ty:ident { $($name:ident),* $(,)? }) => {
        $vis struct $ty {
            $(pub(crate) $name: String,)*
        }

        impl $ty {
            pub(crate) fn render(schema: &$crate::schema::SchemaName) -> Self {
                Self {
                    $($name: $crate::schema::render_sql(
                        include_str!(concat!("../queries/", stringify!($name), ".sql")),
                        schema,
                    ),)*
                }
            }
        }
    };
}
pub(crate) use named_queries;

named_queries!(pub(crate) struct Queries {
    // orchestrator queue: claim
    orch_claim,
    orch_claim_give_back,
    orch_start_exclusive,
    orch_lease_restamp,
    orch_orphans_sweep,
    history_load,
    history_load_latest,
    // orchestrator queue: ack, abandon, renew
    orch_lease_lock_by_token,
    orch_lease_attempts_by_token,
    orch_lease_lock_by_instance,
    orch_lease_generation,
    orch_lease_release,
    orch_abandon_messages,
    orch_lease_renew,
    orch_enqueue,
    orch_enqueue_start,
    turn_write,
    turn_ack,
    history_append,
    history_next_event_id,
    execution_state,
    // worker queue
    worker_enqueue,
    worker_claim,
    worker_session_owners,
    worker_give_back,
    worker_lock_by_token,
    session_claim,
    worker_ack,
    worker_identity_by_token,
    worker_lock_by_identity,
    session_touch,
    worker_renew,
    worker_abandon,
    session_renew,
    session_cleanup,
    // poison and dead letters
    dead_letter_orch_messages,
    dead_letter_orch_by_ids,
    dead_letter_worker_item,
    dead_letters_list,
    dead_letter_get,
    dead_letter_take,
    dead_letters_purge,
    // reads
    custom_status_get,
    orchestration_status,
    kv_get,
    kv_get_all,
    instance_stats,
    max_attempt_count,
    warm_up,
});
