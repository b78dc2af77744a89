-- Refresh a live session's activity time (activity ack and lease renewal).
CREATE OR REPLACE FUNCTION __SCHEMA__.touch_session(p_session text)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
    SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off AS $$
BEGIN
    UPDATE __SCHEMA__.sessions
    SET last_activity_at = clock_timestamp()
    WHERE session_id = p_session AND locked_until > clock_timestamp();
END;
$$;
