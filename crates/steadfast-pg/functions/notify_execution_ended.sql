-- Wake clients waiting for an orchestration: a notification when an execution ends.
-- Channel: the enqueue channel's name (see functions/notify_enqueued.sql) + '_end'.
-- Payload: the instance id, cut to 1000 characters (a notification payload must stay
-- under 8000 bytes; a waiter compares only that much, and a false wake costs one status
-- read). Sent at commit, so a woken waiter reads the committed end.
CREATE OR REPLACE FUNCTION __SCHEMA__.notify_execution_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('steadfast_' || left(md5(TG_TABLE_SCHEMA), 16) || '_end',
                      left(NEW.instance_id, 1000));
    RETURN NULL;
END;
$$;

CREATE OR REPLACE TRIGGER executions_end_notify AFTER INSERT OR UPDATE OF status ON __SCHEMA__.executions
    FOR EACH ROW WHEN (NEW.status <> 'Running')
    EXECUTE FUNCTION __SCHEMA__.notify_execution_ended();
