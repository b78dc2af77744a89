-- Append-only: a duplicate (instance, execution, event_id) is a unique violation.
CREATE OR REPLACE FUNCTION __SCHEMA__.append_history(
    p_instance text, p_execution bigint,
    p_event_ids bigint[], p_event_types text[], p_event_texts text[]
) RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    INSERT INTO __SCHEMA__.history (instance_id, execution_id, event_id, event_type, event_data)
    SELECT p_instance, p_execution, t.event_id, t.event_type, t.event_data
    FROM unnest(p_event_ids, p_event_types, p_event_texts) AS t(event_id, event_type, event_data);
END;
$$;
