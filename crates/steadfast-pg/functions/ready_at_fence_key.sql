-- The key of an instance's ready_at fence (functions/settle_ready_at.sql): a
-- transaction-level advisory lock, tried, never waited for (pg_try_advisory_xact_lock and
-- its _shared form, called where they are taken, so that PostgreSQL inlines this), shared
-- by an enqueue (functions/enqueue_orchestrator.sql) that counts on ready_at staying as low
-- as it found it, exclusive by whoever would raise it. High word: this schema's; low word:
-- the instance's hash (two instances that collide only cost a hint or an early ready_at).
--
-- Not a row lock: PostgreSQL can grant FOR KEY SHARE on a row to one transaction while it
-- grants FOR UPDATE to another (heap_lock_tuple's key-share path re-checks only whether
-- the row was updated meanwhile, not whether it was locked: seen 6 times in 20 s of two
-- loops on one row, PostgreSQL 15). With the enqueue's hold a KEY SHARE row lock, a settle
-- could raise ready_at past a message the enqueue then committed with no hint, and the
-- message waited for the instance's next enqueue (duroxide's stress workload: one
-- orchestration in about a hundred runs never finished; tests/ready_at_races.rs).
CREATE OR REPLACE FUNCTION __SCHEMA__.ready_at_fence_key(p_instance text)
RETURNS bigint LANGUAGE sql IMMUTABLE AS $$
    SELECT (pg_catalog.hashtext('__SCHEMA__.ready_at')::int8 << 32)
         | (pg_catalog.hashtext(p_instance)::int8 & 4294967295)
$$;
