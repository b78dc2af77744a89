-- steadfast-pg schema, version 5: a notification when an execution ends, so that clients
-- waiting for an orchestration wake on it instead of polling its status.
-- __SCHEMA__ is replaced by the validated, quoted schema name before this file runs.

-- Channel: the enqueue channel's name (see notify_enqueued, migration 0001) + '_end'.
-- Payload: the instance id, cut to 1000 characters (a notification payload must stay
-- under 8000 bytes; a waiter compares only that much, and a false wake costs one status
-- read). Sent at commit, so a woken waiter reads the committed end.
CREATE FUNCTION __SCHEMA__.notify_execution_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('steadfast_' || left(md5(TG_TABLE_SCHEMA), 16) || '_end',
                      left(NEW.instance_id, 1000));
    RETURN NULL;
END;
$$;

CREATE TRIGGER executions_end_notify AFTER INSERT OR UPDATE OF status ON __SCHEMA__.executions
    FOR EACH ROW WHEN (NEW.status <> 'Running')
    EXECUTE FUNCTION __SCHEMA__.notify_execution_ended();
