-- Wake long-polling dispatchers: one notification per inserting statement,
-- on a channel derived from the schema (channel names are limited to 63 bytes).
CREATE OR REPLACE FUNCTION __SCHEMA__.notify_enqueued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('steadfast_' || left(md5(TG_TABLE_SCHEMA), 16), TG_ARGV[0]);
    RETURN NULL;
END;
$$;
CREATE OR REPLACE TRIGGER orchestrator_queue_notify AFTER INSERT ON __SCHEMA__.orchestrator_queue
    FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.notify_enqueued('o');
CREATE OR REPLACE TRIGGER worker_queue_notify AFTER INSERT ON __SCHEMA__.worker_queue
    FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.notify_enqueued('w');
