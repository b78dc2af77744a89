-- Enqueue activity work items, none handed out (functions/enqueue_work_items.sql). Per
-- item: work item, instance, execution, activity id, session, tag.
CREATE OR REPLACE FUNCTION __SCHEMA__.enqueue_worker(
    p_items text[], p_instances text[], p_executions bigint[], p_activities bigint[],
    p_sessions text[], p_tags text[]
) RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    PERFORM __SCHEMA__.enqueue_work_items(p_items, p_instances, p_executions, p_activities,
                                          p_sessions, p_tags, NULL, NULL, NULL);
END;
$$;
