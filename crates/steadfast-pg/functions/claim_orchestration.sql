-- Created, not replaced: a change of its OUT columns needs the old definition gone first
-- (both signatures: before and since p_next_visible). Callers name the columns they read,
-- so one that predates an OUT column keeps working.
DROP FUNCTION IF EXISTS __SCHEMA__.claim_orchestration(
    text, float8, real, integer, integer, integer, float8, float8, float8,
    boolean, integer[], integer[], integer, text, integer, integer, bigint);
DROP FUNCTION IF EXISTS __SCHEMA__.claim_orchestration(
    text, float8, real, integer, integer, integer, float8, float8, float8,
    boolean, integer[], integer[], integer, text, integer, integer, bigint, boolean);

-- Claim one instance's visible orchestrator messages.
--
-- Candidates: the instances that have a ready message (instance_leases.ready_at, or a
-- ready_hints row; messages waiting for a start make none), are runnable (instance_leases.runnable_from: started, or their start is
-- visible) and have no live lease (an expired one must also have served its backoff),
-- limited to executions pinned inside the version range when p_filter is set (the pin as
-- the lease row carries it: functions/lease_pin_in_range.sql); at most
-- p_scan of each kind, oldest first. The scan reads lease rows, not messages, so its cost
-- does not grow with any instance's backlog: a leased instance with a million messages
-- queued is one row it passes over. The instances, oldest first, are cut into blocks of
-- p_fanout; the try order takes a random member of each block in turn (first the oldest
-- block), so concurrent claims spread over young work instead of chasing the same rows.
-- A round walks the whole list, then re-reads it: a candidate taken meanwhile fails its
-- own try, and re-reading after every try or two would only spin over rows whose claims
-- are still in flight. A try that finds nothing to hand out settles the instance's
-- ready_at (functions/settle_ready_at.sql), so an early one costs one try, once.
--
-- Each try takes the lease row with FOR NO KEY UPDATE SKIP LOCKED (an enqueue that finds
-- ready_at low enough holds no row lock, only the ready_at fence,
-- functions/ready_at_fence_key.sql): a row held by another transaction is skipped, never
-- waited for. At most p_max_tries counted tries and p_max_ms
-- (the clock re-read per try); the first try always happens. A try that finds nothing to
-- hand out (an early ready_at; a runnable instance whose start left nothing, parked) is
-- not counted, and the instance is passed over by this call's later re-reads: settling
-- ready_at fails while an enqueue holds the row, and a scan full of such rows, older than
-- the ready work, would otherwise use up every try, or fill every re-read, of every fetch
-- while the enqueues last. `tries` reports the counted tries: those that lost a race for
-- the row, and those that stopped an instance (ceiling, history limit).
--
-- The attempt ceiling (p_max_attempts, NULL = none) is decided here, before anything is
-- counted or read: a candidate whose batch holds a message already handed out
-- p_max_attempts + 1 times is failed as poison in this same statement
-- (functions/fail_stopped_instance.sql, one try) and the claim moves on. So no lost
-- reply, crash or failing statement after this one can let a count pass
-- p_max_attempts + 1. The instances it stopped are returned in `stopped`, for
-- diagnostics: one JSON object per instance, fail_stopped_instance's columns with the
-- instance and the reason.
--
-- On success the instance's oldest visible messages (waiting ones included; at most
-- p_max_batch, NULL = all, and for an instance not yet started its starts first, so that
-- a batch cut short still starts it) are tagged with the token
-- 'sf2.<p_nonce>.<generation>.<hex(instance)>' (the generation of the lease row,
-- the baseline migration) and their attempt counted, the instance's metadata, history and KV
-- snapshot are read, and the lease is stamped LAST, once. Messages past the cap stay
-- queued for the instance's next claim. The history is read in event order and at most
-- p_max_history_events events or p_max_history_bytes stored bytes (pg_column_size, so
-- nothing past the limit is decompressed); an instance over either limit is stopped like
-- one at the ceiling, with reason 'history_too_large', instead of being handed out, so a
-- history too large to load fails once, with a reason, rather than erroring every claim.
-- Outcome: 'claimed', 'empty', 'exhausted', or 'timed_out' (statement_timeout ran out while
-- reading the claimed instance, which is then left counted and backing off).
-- 'empty' with p_next_visible also returns next_visible_ms: the milliseconds until the next
-- instance whose earliest ready message is delayed becomes a candidate (NULL if none), so
-- an empty long poll costs one statement. It is read here, not by the calling statement,
-- whose snapshot predates the ready_at this call may have settled.
-- 'claimed' also returns more_ready: whether the round's candidates held another instance
-- (taken or not), for a woken fetch deciding whether to wake another (src/polling.rs).
CREATE FUNCTION __SCHEMA__.claim_orchestration(
    p_nonce text, p_lock_ms float8, p_jitter real,
    p_scan integer, p_fanout integer, p_max_tries integer, p_max_ms float8,
    p_base_ms float8, p_cap_ms float8,
    p_filter boolean, p_min integer[], p_max integer[],
    p_max_attempts integer DEFAULT NULL, p_event_version text DEFAULT 'unknown',
    p_max_batch integer DEFAULT NULL, p_max_history_events integer DEFAULT NULL,
    p_max_history_bytes bigint DEFAULT NULL, p_next_visible boolean DEFAULT false,
    OUT outcome text, OUT tries integer, OUT claimed_instance text, OUT token text,
    OUT msg_ids bigint[], OUT msg_items text[], OUT msg_attempts integer[],
    OUT orch_name text, OUT orch_version text, OUT exec_id bigint, OUT has_instance boolean,
    OUT history_events text[],
    OUT kv_keys text[], OUT kv_values text[], OUT kv_times bigint[],
    OUT lease_ms float8, OUT parked_instances integer,
    OUT stopped text[], OUT next_visible_ms float8, OUT more_ready boolean
) LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
DECLARE
    v_started timestamptz := clock_timestamp();
    v_candidates text[];
    v_missing text[];
    v_candidate text;
    v_generation bigint;
    v_instance_started boolean;
    v_history_count bigint;
    v_history_bytes bigint;
    v_limit text;
    v_token text;
    v_ids bigint[];
    v_items text[];
    v_attempts integer[];
    v_timed_out boolean;
    v_now timestamptz;
    v_batch bigint[];
    v_tagged_until timestamptz;
    v_over_ceiling boolean;
    v_tried integer := 0;
    v_passed text[] := '{}';
BEGIN
    tries := 0;
    parked_instances := 0;
    LOOP
        v_now := clock_timestamp();
        WITH ready AS MATERIALIZED (
            SELECT l.instance_id, l.ready_at AS since, false AS lease_missing
            FROM __SCHEMA__.instance_leases AS l
            WHERE l.ready_at <= v_now
              AND l.runnable_from <= v_now
              AND l.instance_id <> ALL (v_passed)
              AND (l.lock_token IS NULL
                   OR __SCHEMA__.redelivery_at(l.locked_until, l.attempt_count,
                                               l.backoff_jitter, p_base_ms, p_cap_ms)
                      <= v_now)
              AND (NOT p_filter
                   OR __SCHEMA__.lease_pin_in_range(l.instance_id, l.pin_known, l.pinned_major,
                                                    l.pinned_minor, l.pinned_patch,
                                                    p_min, p_max))
            ORDER BY l.ready_at
            LIMIT p_scan
        ), hinted AS MATERIALIZED (
            SELECT h.instance_id, min(h.visible_at) AS since,
                   bool_or(l.instance_id IS NULL) AS lease_missing
            FROM __SCHEMA__.ready_hints AS h
            LEFT JOIN __SCHEMA__.instance_leases AS l ON l.instance_id = h.instance_id
            WHERE h.visible_at <= v_now
              AND h.instance_id <> ALL (v_passed)
              AND (l.instance_id IS NULL
                   OR (l.runnable_from <= v_now
                       AND (l.lock_token IS NULL
                            OR __SCHEMA__.redelivery_at(l.locked_until, l.attempt_count,
                                                        l.backoff_jitter, p_base_ms, p_cap_ms)
                               <= v_now)))
              AND (NOT p_filter
                   OR __SCHEMA__.lease_pin_in_range(h.instance_id, l.pin_known, l.pinned_major,
                                                    l.pinned_minor, l.pinned_patch,
                                                    p_min, p_max))
            GROUP BY h.instance_id
            ORDER BY min(h.visible_at)
            LIMIT p_scan
        ), instances_in_order AS (
            SELECT c.instance_id,
                   bool_or(c.lease_missing) AS lease_missing,
                   row_number() OVER (ORDER BY min(c.since), c.instance_id) - 1 AS pos
            FROM (SELECT * FROM ready UNION ALL SELECT * FROM hinted) AS c
            GROUP BY c.instance_id
        ), try_order AS (
            SELECT o.instance_id, o.lease_missing, o.pos / p_fanout AS block,
                   row_number() OVER (PARTITION BY o.pos / p_fanout ORDER BY random()) AS turn
            FROM instances_in_order AS o
        )
        SELECT array_agg(t.instance_id ORDER BY t.turn, t.block),
               array_agg(t.instance_id ORDER BY t.instance_id) FILTER (WHERE t.lease_missing)
        INTO v_candidates, v_missing
        FROM try_order AS t;

        IF v_candidates IS NULL THEN
            outcome := 'empty';
            IF p_next_visible THEN
                -- Waiting messages make no work when they become visible; nor is a
                -- redelivery's lease ending (its ready_at, functions/stamp_lease.sql) a
                -- time to wake for: leases that run out are the periodic re-check's.
                -- Past v_now, not clock_timestamp() (volatile: a filter, not an index
                -- condition, over every row the scan above passed over); what became
                -- ready since comes out negative, and the fetch claims again at once.
                SELECT (EXTRACT(EPOCH FROM (min(n.at) - clock_timestamp())) * 1000)::float8
                INTO next_visible_ms
                FROM (
                    SELECT min(l.ready_at) AS at
                    FROM __SCHEMA__.instance_leases AS l
                    WHERE l.ready_at > v_now AND l.lock_token IS NULL
                    UNION ALL
                    SELECT min(h.visible_at)
                    FROM __SCHEMA__.ready_hints AS h
                    WHERE h.visible_at > v_now
                ) AS n;
            END IF;
            RETURN;
        END IF;
        IF v_missing IS NOT NULL THEN
            -- Only after an enqueue raced an instance deletion (its hint found no row).
            INSERT INTO __SCHEMA__.instance_leases (instance_id, runnable_from)
            SELECT m.instance_id, __SCHEMA__.instance_runnable_from(m.instance_id)
            FROM unnest(v_missing) AS m(instance_id)
            ON CONFLICT (instance_id) DO NOTHING;
            -- Their messages were ready when enqueued; those of an instance that is not
            -- runnable now wait like any others (and reach the orphan sweep).
            UPDATE __SCHEMA__.orchestrator_queue AS q
            SET waiting = true
            FROM __SCHEMA__.instance_leases AS l
            WHERE q.instance_id = ANY (v_missing) AND l.instance_id = ANY (v_missing)
              AND l.instance_id = q.instance_id
              AND q.lock_token IS NULL
              AND NOT COALESCE(l.runnable_from <= q.visible_at, false);
            PERFORM __SCHEMA__.settle_ready_at(m.instance_id)
            FROM unnest(v_missing) AS m(instance_id);
        END IF;

        FOREACH v_candidate IN ARRAY v_candidates LOOP
            IF v_tried > 0 AND (tries >= p_max_tries
                                OR clock_timestamp() - v_started
                                   >= p_max_ms * interval '1 millisecond') THEN
                outcome := 'exhausted';
                RETURN;
            END IF;
            v_tried := v_tried + 1;

            SELECT l.generation INTO v_generation
            FROM __SCHEMA__.instance_leases AS l
            WHERE l.instance_id = v_candidate
              AND l.runnable_from <= clock_timestamp()
              AND (l.lock_token IS NULL
                   OR __SCHEMA__.redelivery_at(l.locked_until, l.attempt_count,
                                               l.backoff_jitter, p_base_ms, p_cap_ms)
                      <= clock_timestamp())
            FOR NO KEY UPDATE SKIP LOCKED;
            IF NOT FOUND THEN
                tries := tries + 1;
                CONTINUE;
            END IF;

            v_token := 'sf2.' || p_nonce || '.' || v_generation || '.'
                     || encode(convert_to(v_candidate, 'UTF8'), 'hex');
            SELECT i.orchestration_name, i.orchestration_version, i.current_execution_id
            INTO orch_name, orch_version, exec_id
            FROM __SCHEMA__.instances AS i
            WHERE i.instance_id = v_candidate;
            has_instance := FOUND;
            v_instance_started := has_instance;
            IF NOT has_instance THEN
                -- History written without instance metadata: the client recovers name
                -- and version from the latest execution's start event.
                SELECT COALESCE(max(e.execution_id), 1) INTO exec_id
                FROM __SCHEMA__.executions AS e
                WHERE e.instance_id = v_candidate;
                v_instance_started := EXISTS (SELECT 1 FROM __SCHEMA__.history AS h
                                     WHERE h.instance_id = v_candidate
                                       AND h.execution_id = exec_id
                                       AND h.event_type = 'OrchestrationStarted');
            END IF;

            -- The batch: the oldest visible messages, for an instance not started yet its
            -- starts first. Only the lease holder touches an instance's messages: this
            -- never waits.
            v_now := clock_timestamp();
            IF v_instance_started THEN
                SELECT array_agg(b.id), bool_or(b.attempt_count > p_max_attempts)
                INTO v_batch, v_over_ceiling
                FROM (
                    SELECT q.id, q.attempt_count
                    FROM __SCHEMA__.orchestrator_queue AS q
                    WHERE q.instance_id = v_candidate AND q.visible_at <= v_now
                    ORDER BY q.visible_at, q.id
                    LIMIT p_max_batch
                ) AS b;
            ELSE
                SELECT array_agg(b.id), bool_or(b.attempt_count > p_max_attempts)
                INTO v_batch, v_over_ceiling
                FROM (
                    SELECT q.id, q.attempt_count
                    FROM __SCHEMA__.orchestrator_queue AS q
                    WHERE q.instance_id = v_candidate AND q.visible_at <= v_now
                    ORDER BY NOT __SCHEMA__.starts_instance(q.work_item), q.visible_at, q.id
                    LIMIT p_max_batch
                ) AS b;
            END IF;
            IF v_batch IS NULL THEN
                -- Its ready_at was early (its messages were consumed, delayed or deleted
                -- meanwhile): settled now, so that it costs no further try.
                PERFORM __SCHEMA__.settle_ready_at(v_candidate);
                v_passed := v_passed || v_candidate;
                CONTINUE;
            END IF;
            tries := tries + 1;

            -- The attempt ceiling, before anything is counted or any history read.
            IF v_over_ceiling THEN
                stopped := array_append(stopped, (
                    SELECT (to_jsonb(f) || jsonb_build_object('instance', v_candidate,
                                                              'reason', 'attempt_ceiling'))::text
                    FROM __SCHEMA__.fail_stopped_instance(v_candidate, p_max_attempts,
                                                          p_event_version, 'attempt_ceiling',
                                                          NULL) AS f));
                CONTINUE;
            END IF;

            WITH tagged AS (
                UPDATE __SCHEMA__.orchestrator_queue AS q
                SET lock_token = v_token, attempt_count = q.attempt_count + 1, waiting = false
                WHERE q.id = ANY (v_batch)
                RETURNING q.id, q.work_item, q.attempt_count, q.visible_at
            )
            SELECT array_agg(t.id ORDER BY t.id), array_agg(t.work_item ORDER BY t.id),
                   array_agg(t.attempt_count ORDER BY t.id), max(t.visible_at)
            INTO v_ids, v_items, v_attempts, v_tagged_until
            FROM tagged AS t;
            CONTINUE WHEN v_ids IS NULL;
            IF NOT v_instance_started AND cardinality(v_ids) = p_max_batch THEN
                -- A batch cut short by the cap that starts the instance: what it left
                -- waiting is ready from now on (an instance this batch does not start
                -- gets its messages put back to waiting below).
                UPDATE __SCHEMA__.orchestrator_queue AS q
                SET waiting = false
                WHERE q.instance_id = v_candidate AND q.waiting AND q.lock_token IS NULL
                  AND q.visible_at <= clock_timestamp();
            END IF;

            IF NOT v_instance_started
               AND NOT EXISTS (SELECT 1 FROM unnest(v_items) AS m(item)
                               WHERE __SCHEMA__.starts_instance(m.item)) THEN
                -- Runnable, yet never started and nothing here starts it (its start was
                -- dead-lettered, or acked without writing anything). Its messages are put
                -- back untouched and wait for a start like those of an instance never
                -- started: parked until a queued start, if any, becomes visible.
                UPDATE __SCHEMA__.orchestrator_queue AS q
                SET lock_token = NULL, attempt_count = q.attempt_count - 1, waiting = true
                WHERE __SCHEMA__.tagged_by_claim(q.instance_id, q.visible_at, q.lock_token,
                                                 v_candidate, v_token, v_tagged_until);
                UPDATE __SCHEMA__.orchestrator_queue AS q
                SET waiting = true
                WHERE q.instance_id = v_candidate AND NOT q.waiting
                  AND q.visible_at <= clock_timestamp();
                UPDATE __SCHEMA__.instance_leases AS l
                SET runnable_from = __SCHEMA__.first_queued_start(v_candidate)
                WHERE l.instance_id = v_candidate;
                PERFORM __SCHEMA__.settle_ready_at(v_candidate);
                parked_instances := parked_instances + 1;
                tries := tries - 1;
                v_passed := v_passed || v_candidate;
                CONTINUE;
            END IF;
            v_timed_out := false;
            BEGIN
                SELECT array_agg(b.event_data ORDER BY b.event_id)
                           FILTER (WHERE b.stored <= p_max_history_bytes
                                         OR p_max_history_bytes IS NULL),
                       count(*), max(b.stored)
                INTO history_events, v_history_count, v_history_bytes
                FROM (
                    SELECT h.event_id, h.event_data,
                           sum(CASE WHEN p_max_history_bytes IS NULL THEN 0
                                    ELSE pg_column_size(h.event_data) END)
                               OVER (ORDER BY h.event_id) AS stored
                    FROM __SCHEMA__.history AS h
                    WHERE h.instance_id = v_candidate AND h.execution_id = exec_id
                    ORDER BY h.event_id
                    LIMIT p_max_history_events::bigint + 1
                ) AS b;
                v_limit := CASE
                    WHEN v_history_count > p_max_history_events THEN format(
                        'the history of execution %s has more than %s events '
                        '(claim.max_history_events); the instance cannot be loaded',
                        exec_id, p_max_history_events)
                    WHEN v_history_bytes > p_max_history_bytes THEN format(
                        'the history of execution %s is larger than %s stored bytes '
                        '(claim.max_history_bytes); the instance cannot be loaded',
                        exec_id, p_max_history_bytes)
                END;
                IF v_limit IS NOT NULL THEN
                    history_events := NULL;
                    stopped := array_append(stopped, (
                        SELECT (to_jsonb(f) || jsonb_build_object(
                                   'instance', v_candidate,
                                   'reason', 'history_too_large'))::text
                        FROM __SCHEMA__.fail_stopped_instance(v_candidate, p_max_attempts,
                                                              p_event_version,
                                                              'history_too_large',
                                                              v_limit) AS f));
                    CONTINUE;
                END IF;
                SELECT array_agg(k.key), array_agg(k.value), array_agg(k.last_updated_at_ms)
                INTO kv_keys, kv_values, kv_times
                FROM __SCHEMA__.kv_store AS k
                WHERE k.instance_id = v_candidate;
            EXCEPTION WHEN query_canceled THEN
                -- statement_timeout ran out while reading this instance. Rolling the
                -- claim back would leave it uncounted and retried for ever; instead the
                -- attempt stays counted and the lease is stamped already expired, so the
                -- instance backs off like any lease that ran out, and the attempt ceiling
                -- ends one that always times out. Only this block is undone.
                history_events := NULL;
                kv_keys := NULL;
                kv_values := NULL;
                kv_times := NULL;
                v_timed_out := true;
            END;

            claimed_instance := v_candidate;
            token := v_token;
            msg_ids := v_ids;
            msg_items := v_items;
            msg_attempts := v_attempts;
            lease_ms := __SCHEMA__.stamp_lease(
                v_candidate, v_token, CASE WHEN v_timed_out THEN 0 ELSE p_lock_ms END,
                (SELECT max(a) FROM unnest(v_attempts) AS a), p_jitter, p_base_ms, p_cap_ms,
                v_tagged_until);
            outcome := CASE WHEN v_timed_out THEN 'timed_out' ELSE 'claimed' END;
            more_ready := cardinality(v_candidates) > 1;
            RETURN;
        END LOOP;
    END LOOP;
END;
$$;
