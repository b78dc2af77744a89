-- Everything one orchestration turn writes besides lease and queue bookkeeping: instance
-- and execution rows, history, status, custom status, KV, and the messages the turn
-- produces. The caller holds the instance's lease row. Parameters:
--   metadata: name and version (the instance row is upserted when both are set), parent
--     (immutable once set), pinned version (major, minor, patch) or NULL, status and
--     output (status NULL = unchanged);
--   history: event ids, types and JSON texts;
--   custom status: whether the turn changed it, and its new value;
--   KV operations in order: key NULL clears all keys, value NULL is a tombstone, time
--     NULL stamps the database clock;
--   worker items (see enqueue_worker), cancelled activities (instance, execution,
--   activity id), orchestrator items (see enqueue_orchestrator).
CREATE OR REPLACE FUNCTION __SCHEMA__.write_turn(
    p_instance text, p_execution bigint,
    p_name text, p_version text, p_parent text, p_pin integer[],
    p_status text, p_output text,
    p_event_ids bigint[], p_event_types text[], p_event_texts text[],
    p_custom_status_changed boolean, p_custom_status text,
    p_kv_keys text[], p_kv_values text[], p_kv_times bigint[],
    p_w_items text[], p_w_instances text[], p_w_executions bigint[], p_w_activities bigint[],
    p_w_sessions text[], p_w_tags text[],
    p_c_instances text[], p_c_executions bigint[], p_c_activities bigint[],
    p_o_instances text[], p_o_items text[], p_o_delays float8[], p_o_visible float8[]
) RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_now_ms bigint;
BEGIN
    -- The instance row and the execution row are each written once a turn at most (an
    -- insert that also sets what a later update would have), and the instance row only
    -- when the turn changes it: most turns of a running instance leave its name, version
    -- and current execution as they were, and its updated time is read from its latest
    -- history event (queries/admin_instances_page.sql). The caller holds the lease row,
    -- which every writer of the instance row takes first, so the read cannot go stale.
    IF EXISTS (
        SELECT 1 FROM __SCHEMA__.instances AS i
        WHERE i.instance_id = p_instance AND i.current_execution_id >= p_execution
          AND (p_name IS NULL OR p_version IS NULL
               OR (i.orchestration_name = p_name AND i.orchestration_version = p_version))
    ) THEN
        NULL;
    ELSIF p_name IS NOT NULL AND p_version IS NOT NULL THEN
        INSERT INTO __SCHEMA__.instances AS i
            (instance_id, orchestration_name, orchestration_version, current_execution_id,
             parent_instance_id)
        VALUES (p_instance, p_name, p_version, p_execution, p_parent)
        ON CONFLICT (instance_id) DO UPDATE
        SET orchestration_name = EXCLUDED.orchestration_name,
            orchestration_version = EXCLUDED.orchestration_version,
            current_execution_id = GREATEST(i.current_execution_id, EXCLUDED.current_execution_id),
            updated_at = clock_timestamp();
    ELSE
        UPDATE __SCHEMA__.instances AS i
        SET current_execution_id = GREATEST(i.current_execution_id, p_execution),
            updated_at = clock_timestamp()
        WHERE i.instance_id = p_instance;
    END IF;
    IF p_pin IS NULL THEN
        INSERT INTO __SCHEMA__.executions (instance_id, execution_id)
        VALUES (p_instance, p_execution)
        ON CONFLICT (instance_id, execution_id) DO NOTHING;
    ELSE
        INSERT INTO __SCHEMA__.executions AS e
            (instance_id, execution_id, pinned_major, pinned_minor, pinned_patch)
        VALUES (p_instance, p_execution, p_pin[1], p_pin[2], p_pin[3])
        ON CONFLICT (instance_id, execution_id) DO UPDATE
        SET pinned_major = EXCLUDED.pinned_major, pinned_minor = EXCLUDED.pinned_minor,
            pinned_patch = EXCLUDED.pinned_patch;
    END IF;
    IF cardinality(p_event_ids) > 0 THEN
        PERFORM __SCHEMA__.append_history(p_instance, p_execution, p_event_ids,
                                          p_event_types, p_event_texts);
    END IF;
    IF p_status IS NOT NULL THEN
        UPDATE __SCHEMA__.executions AS e
        SET status = p_status,
            output = p_output,
            completed_at = CASE WHEN p_status IN ('Completed', 'Failed', 'ContinuedAsNew')
                                THEN clock_timestamp() ELSE e.completed_at END
        WHERE e.instance_id = p_instance AND e.execution_id = p_execution;
    END IF;
    IF p_custom_status_changed THEN
        UPDATE __SCHEMA__.instances AS i
        SET custom_status = p_custom_status, custom_status_version = i.custom_status_version + 1
        WHERE i.instance_id = p_instance;
    END IF;
    FOR n IN 1 .. COALESCE(cardinality(p_kv_keys), 0) LOOP
        v_now_ms := (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::int8;
        IF p_kv_keys[n] IS NULL THEN
            -- Tombstone every key visible to the instance (stored or set in this execution).
            INSERT INTO __SCHEMA__.kv_delta AS d (instance_id, key, value, last_updated_at_ms)
            SELECT p_instance, k.key, NULL, v_now_ms
            FROM (
                SELECT s.key FROM __SCHEMA__.kv_store AS s WHERE s.instance_id = p_instance
                UNION
                SELECT x.key FROM __SCHEMA__.kv_delta AS x WHERE x.instance_id = p_instance
            ) AS k
            ON CONFLICT (instance_id, key) DO UPDATE
            SET value = NULL, last_updated_at_ms = EXCLUDED.last_updated_at_ms;
        ELSE
            INSERT INTO __SCHEMA__.kv_delta AS d (instance_id, key, value, last_updated_at_ms)
            VALUES (p_instance, p_kv_keys[n], p_kv_values[n], COALESCE(p_kv_times[n], v_now_ms))
            ON CONFLICT (instance_id, key) DO UPDATE
            SET value = EXCLUDED.value, last_updated_at_ms = EXCLUDED.last_updated_at_ms;
        END IF;
    END LOOP;
    IF p_status IN ('Completed', 'Failed', 'ContinuedAsNew') THEN
        -- The execution ended: fold its KV delta into the store, apply tombstones, clear it.
        INSERT INTO __SCHEMA__.kv_store AS s (instance_id, key, value, last_updated_at_ms)
        SELECT d.instance_id, d.key, d.value, d.last_updated_at_ms
        FROM __SCHEMA__.kv_delta AS d
        WHERE d.instance_id = p_instance AND d.value IS NOT NULL
        ON CONFLICT (instance_id, key) DO UPDATE
        SET value = EXCLUDED.value, last_updated_at_ms = EXCLUDED.last_updated_at_ms;
        DELETE FROM __SCHEMA__.kv_store AS s
        USING __SCHEMA__.kv_delta AS d
        WHERE s.instance_id = p_instance AND d.instance_id = p_instance AND d.key = s.key
          AND d.value IS NULL;
        DELETE FROM __SCHEMA__.kv_delta AS d WHERE d.instance_id = p_instance;
    END IF;
    IF cardinality(p_w_items) > 0 THEN
        PERFORM __SCHEMA__.enqueue_worker(p_w_items, p_w_instances, p_w_executions,
                                          p_w_activities, p_w_sessions, p_w_tags);
    END IF;
    IF cardinality(p_c_instances) > 0 THEN
        -- A worker holding a cancelled activity learns of it at its next renewal.
        DELETE FROM __SCHEMA__.worker_queue AS w
        WHERE w.instance_id = ANY (p_c_instances)
          AND (w.instance_id, w.execution_id, w.activity_id) IN (
            SELECT * FROM unnest(p_c_instances, p_c_executions, p_c_activities)
        );
    END IF;
    IF cardinality(p_o_items) > 0 THEN
        PERFORM __SCHEMA__.enqueue_orchestrator(p_o_instances, p_o_items, p_o_delays,
                                                p_o_visible);
    END IF;
END;
$$;
