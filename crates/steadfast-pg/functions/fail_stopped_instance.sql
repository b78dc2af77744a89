-- Stop an instance the claim cannot hand out (called by claim_orchestration, which holds
-- the instance's lease row), in the claim's own statement:
--   * p_reason 'attempt_ceiling' (p_limit NULL): a visible message was already handed out
--     p_max_attempts + 1 times, so handing its batch out again would exceed the ceiling;
--   * p_reason 'history_too_large': loading the history would pass a limit, p_limit says
--     which (claim.max_history_events or claim.max_history_bytes).
-- Instead of handing it out:
--   * the handed-out messages move to dead_letters with reason p_reason;
--   * unless the execution is already terminal, it fails with the runtime's event shape:
--     OrchestrationStarted if its history is empty (from the batch's start), then
--     OrchestrationFailed (Poison details at the ceiling; non-retryable Infrastructure
--     details naming the limit for a history too large), status Failed, and the parent
--     (of a sub-orchestration) gets SubOrchFailed;
--   * the lease is released.
-- Nothing here reads more than the first history event, so a history too large to load
-- cannot stop it. The batch belongs to the next execution when the current one continued
-- as new and a ContinueAsNew is queued. p_event_version is the duroxide version stamped
-- on the events, as the runtime stamps its own.
--
-- Data this build cannot make sense of (or a foreign trigger that raises) must not stop
-- every claim that meets it: if failing the execution raises, the messages are still
-- dead-lettered and the execution is left unfailed (execution_id NULL; the dead letters'
-- error says why); if even that raises, nothing is changed (moved 0, kinds names the
-- error) and the claim goes on to its next candidate.
CREATE OR REPLACE FUNCTION __SCHEMA__.fail_stopped_instance(
    p_instance text, p_max_attempts integer, p_event_version text, p_reason text,
    p_limit text,
    OUT execution_id bigint, OUT failed boolean, OUT moved integer, OUT kinds text
) LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_handed_out integer := p_max_attempts + 1;
    v_now_ms bigint := (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::int8;
    v_name text;
    v_version text;
    v_has_instance boolean;
    v_status text;
    v_batch text;
    v_start jsonb;
    v_start_kind text;
    v_link jsonb;
    v_next_id bigint;
    v_details jsonb;
    v_display text;
    v_event jsonb;
    v_events jsonb[] := '{}';
    v_parent text;
    v_parent_execution bigint;
    v_error text;
BEGIN
    SELECT '[' || string_agg(q.work_item, ',' ORDER BY q.id) || ']' INTO v_batch
    FROM __SCHEMA__.orchestrator_queue AS q
    WHERE q.instance_id = p_instance AND q.visible_at <= clock_timestamp();
    -- A work item's kind is its first key (serde's enum encoding); in order of appearance.
    SELECT string_agg(k.kind, '+' ORDER BY k.first_id) INTO kinds
    FROM (
        SELECT split_part(q.work_item, '"', 2) AS kind, min(q.id) AS first_id
        FROM __SCHEMA__.orchestrator_queue AS q
        WHERE q.instance_id = p_instance AND q.visible_at <= clock_timestamp()
        GROUP BY 1
    ) AS k;

    -- The batch's start: a ContinueAsNew first (it names the next execution), else a start.
    SELECT split_part(q.work_item, '"', 2), __SCHEMA__.try_jsonb(q.work_item)
    INTO v_start_kind, v_start
    FROM __SCHEMA__.orchestrator_queue AS q
    WHERE q.instance_id = p_instance AND q.visible_at <= clock_timestamp()
      AND __SCHEMA__.starts_instance(q.work_item)
    ORDER BY q.work_item LIKE '{"ContinueAsNew":%' DESC, q.id
    LIMIT 1;
    v_start := v_start -> v_start_kind;

    SELECT i.orchestration_name, i.orchestration_version, i.current_execution_id
    INTO v_name, v_version, execution_id
    FROM __SCHEMA__.instances AS i
    WHERE i.instance_id = p_instance;
    v_has_instance := FOUND;
    execution_id := COALESCE(execution_id, 1);
    SELECT e.status INTO v_status
    FROM __SCHEMA__.executions AS e
    WHERE e.instance_id = p_instance AND e.execution_id = fail_stopped_instance.execution_id;
    IF v_status = 'ContinuedAsNew' AND v_start_kind = 'ContinueAsNew' THEN
        execution_id := execution_id + 1;
        SELECT e.status INTO v_status
        FROM __SCHEMA__.executions AS e
        WHERE e.instance_id = p_instance AND e.execution_id = fail_stopped_instance.execution_id;
    END IF;
    IF NOT v_has_instance THEN
        v_name := COALESCE(v_start ->> 'orchestration', 'unknown');
        v_version := v_start ->> 'version';
    END IF;
    v_version := COALESCE(v_version, 'unknown');

    IF p_limit IS NULL THEN
        v_details := jsonb_build_object('Poison', jsonb_build_object(
            'attempt_count', v_handed_out,
            'max_attempts', p_max_attempts,
            'message_type', jsonb_build_object('Orchestration', jsonb_build_object(
                'instance', p_instance, 'execution_id', execution_id)),
            'message', COALESCE(v_batch, '[]')));
        v_display := format('poison: orchestration %s exceeded %s attempts (max %s)',
                            p_instance, v_handed_out, p_max_attempts);
    ELSE
        -- duroxide's own rendering of these details (ErrorDetails::display_message).
        v_details := jsonb_build_object('Infrastructure', jsonb_build_object(
            'operation', 'load_history', 'message', p_limit, 'retryable', false));
        v_display := 'infrastructure:load_history: ' || p_limit;
    END IF;

    moved := __SCHEMA__.dead_letter_handed_out(p_instance, execution_id, p_max_attempts,
                                               p_reason, v_display);

    failed := COALESCE(v_status NOT IN ('Completed', 'Failed', 'ContinuedAsNew'), true)
              AND (v_has_instance OR v_start IS NOT NULL);
    IF failed THEN
        SELECT COALESCE(max(h.event_id), 0) + 1 INTO v_next_id
        FROM __SCHEMA__.history AS h
        WHERE h.instance_id = p_instance AND h.execution_id = fail_stopped_instance.execution_id;
        IF v_next_id = 1 AND v_start IS NOT NULL THEN
            v_link := v_start;
            v_events := array_append(v_events, (
                jsonb_build_object(
                    'event_id', 1, 'source_event_id', NULL, 'instance_id', p_instance,
                    'execution_id', execution_id, 'timestamp_ms', v_now_ms,
                    'duroxide_version', p_event_version, 'type', 'OrchestrationStarted',
                    'name', v_name, 'version', v_version, 'input', v_start -> 'input',
                    'parent_instance', COALESCE(v_start -> 'parent_instance', 'null'),
                    'parent_id', COALESCE(v_start -> 'parent_id', 'null'))
                || jsonb_strip_nulls(jsonb_build_object(
                    'parent_execution_id', v_start -> 'parent_execution_id',
                    'initial_custom_status', v_start -> 'initial_custom_status'))
                || CASE WHEN v_start_kind = 'ContinueAsNew'
                        THEN jsonb_build_object('carry_forward_events',
                                                COALESCE(v_start -> 'carry_forward_events', '[]'))
                        ELSE '{}' END));
            v_next_id := 2;
        ELSIF v_next_id > 1 THEN
            SELECT __SCHEMA__.try_jsonb(h.event_data) INTO v_link
            FROM __SCHEMA__.history AS h
            WHERE h.instance_id = p_instance AND h.execution_id = fail_stopped_instance.execution_id
            ORDER BY h.event_id
            LIMIT 1;
            IF v_link ->> 'type' IS DISTINCT FROM 'OrchestrationStarted' THEN
                v_link := NULL;
            END IF;
        END IF;
        v_events := array_append(v_events, jsonb_build_object(
            'event_id', v_next_id, 'source_event_id', NULL, 'instance_id', p_instance,
            'execution_id', execution_id, 'timestamp_ms', v_now_ms,
            'duroxide_version', p_event_version, 'type', 'OrchestrationFailed',
            'details', v_details));

        v_parent := v_link ->> 'parent_instance';
        IF jsonb_typeof(v_link -> 'parent_id') IS DISTINCT FROM 'number' THEN
            v_parent := NULL;
        END IF;
        IF v_parent IS NOT NULL THEN
            IF jsonb_typeof(v_link -> 'parent_execution_id') = 'number' THEN
                v_parent_execution := (v_link ->> 'parent_execution_id')::bigint;
            END IF;
            IF v_parent_execution IS NULL THEN
                SELECT i.current_execution_id INTO v_parent_execution
                FROM __SCHEMA__.instances AS i
                WHERE i.instance_id = v_parent;
            END IF;
        END IF;

        PERFORM __SCHEMA__.write_turn(
            p_instance, execution_id, v_name, v_version, v_parent, NULL, 'Failed', v_display,
            (SELECT array_agg((e ->> 'event_id')::bigint) FROM unnest(v_events) AS e),
            (SELECT array_agg(e ->> 'type') FROM unnest(v_events) AS e),
            (SELECT array_agg(e::text) FROM unnest(v_events) AS e),
            false, NULL,
            '{}', '{}', '{}',
            '{}', '{}', '{}', '{}', '{}', '{}',
            '{}', '{}', '{}',
            CASE WHEN v_parent IS NULL THEN '{}' ELSE ARRAY[v_parent] END,
            CASE WHEN v_parent IS NULL THEN '{}' ELSE ARRAY[jsonb_build_object(
                'SubOrchFailed', jsonb_build_object(
                    'parent_instance', v_parent,
                    'parent_execution_id', COALESCE(v_parent_execution, 1),
                    'parent_id', (v_link ->> 'parent_id')::bigint,
                    'details', v_details))::text] END,
            CASE WHEN v_parent IS NULL THEN '{}' ELSE ARRAY[NULL::float8] END,
            CASE WHEN v_parent IS NULL THEN '{}' ELSE ARRAY[NULL::float8] END);
    END IF;
    PERFORM __SCHEMA__.release_lease(p_instance);
EXCEPTION WHEN others THEN
    GET STACKED DIAGNOSTICS v_error = MESSAGE_TEXT;
    execution_id := NULL;
    failed := false;
    kinds := NULL;
    BEGIN
        moved := __SCHEMA__.dead_letter_handed_out(
            p_instance, NULL, p_max_attempts, p_reason,
            format('%s; failing the execution raised: %s',
                   COALESCE('infrastructure:load_history: ' || p_limit,
                            'attempt ceiling reached'),
                   v_error));
        PERFORM __SCHEMA__.release_lease(p_instance);
    EXCEPTION WHEN others THEN
        GET STACKED DIAGNOSTICS v_error = MESSAGE_TEXT;
        moved := 0;
        kinds := 'error: ' || v_error;
    END;
END;
$$;
