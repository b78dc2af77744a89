-- steadfast-pg schema, version 1.
-- Every table lives in the provider's own schema (__SCHEMA__ is replaced by the
-- validated, quoted schema name before this file runs). Migrations change schema
-- only and are never edited once released: add a new numbered file instead.

CREATE TABLE __SCHEMA__.instances (
    instance_id            text        PRIMARY KEY,
    orchestration_name     text        NOT NULL,
    orchestration_version  text,
    current_execution_id   bigint      NOT NULL DEFAULT 1,
    parent_instance_id     text,
    custom_status          text,
    custom_status_version  bigint      NOT NULL DEFAULT 0,
    created_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at             timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX instances_parent_idx ON __SCHEMA__.instances (parent_instance_id)
    WHERE parent_instance_id IS NOT NULL;

CREATE TABLE __SCHEMA__.executions (
    instance_id    text        NOT NULL,
    execution_id   bigint      NOT NULL,
    status         text        NOT NULL DEFAULT 'Running',
    output         text,
    pinned_major   integer,
    pinned_minor   integer,
    pinned_patch   integer,
    started_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    completed_at   timestamptz,
    PRIMARY KEY (instance_id, execution_id)
);

CREATE TABLE __SCHEMA__.history (
    instance_id   text        NOT NULL,
    execution_id  bigint      NOT NULL,
    event_id      bigint      NOT NULL,
    event_type    text        NOT NULL,
    event_data    text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (instance_id, execution_id, event_id)
);

-- One row per instance that has ever had a queued message. The row exists before
-- any claim (it is created on enqueue), so a claim only ever takes a row lock with
-- SKIP LOCKED and never waits on another transaction. A lease is live while
-- lock_token is set and locked_until is in the future by the database clock.
-- A lease that ran out without ack or abandon keeps its token: the instance is
-- eligible again only after locked_until + backoff(attempt_count, backoff_jitter).
CREATE TABLE __SCHEMA__.instance_leases (
    instance_id     text        PRIMARY KEY,
    lock_token      text,
    locked_until    timestamptz,
    locked_at       timestamptz,
    attempt_count   integer     NOT NULL DEFAULT 0,
    backoff_jitter  real        NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX instance_leases_token_idx ON __SCHEMA__.instance_leases (lock_token)
    WHERE lock_token IS NOT NULL;

CREATE TABLE __SCHEMA__.orchestrator_queue (
    id             bigserial   PRIMARY KEY,
    instance_id    text        NOT NULL,
    work_item      text        NOT NULL,
    visible_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    lock_token     text,
    attempt_count  integer     NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX orchestrator_queue_ready_idx ON __SCHEMA__.orchestrator_queue (visible_at, id);
CREATE INDEX orchestrator_queue_instance_idx ON __SCHEMA__.orchestrator_queue (instance_id, id);
CREATE INDEX orchestrator_queue_token_idx ON __SCHEMA__.orchestrator_queue (lock_token)
    WHERE lock_token IS NOT NULL;

CREATE TABLE __SCHEMA__.worker_queue (
    id              bigserial   PRIMARY KEY,
    work_item       text        NOT NULL,
    visible_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    lock_token      text,
    locked_until    timestamptz,
    attempt_count   integer     NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    backoff_jitter  real        NOT NULL DEFAULT 0,
    instance_id     text,
    execution_id    bigint,
    activity_id     bigint,
    session_id      text,
    tag             text,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX worker_queue_ready_idx ON __SCHEMA__.worker_queue (visible_at, id);
CREATE UNIQUE INDEX worker_queue_token_idx ON __SCHEMA__.worker_queue (lock_token)
    WHERE lock_token IS NOT NULL;
CREATE INDEX worker_queue_identity_idx ON __SCHEMA__.worker_queue (instance_id, execution_id, activity_id);
CREATE INDEX worker_queue_session_idx ON __SCHEMA__.worker_queue (session_id)
    WHERE session_id IS NOT NULL;

CREATE TABLE __SCHEMA__.sessions (
    session_id        text        PRIMARY KEY,
    worker_id         text        NOT NULL,
    locked_until      timestamptz NOT NULL,
    last_activity_at  timestamptz NOT NULL
);

-- Key-value state merged from completed executions.
CREATE TABLE __SCHEMA__.kv_store (
    instance_id         text   NOT NULL,
    key                 text   NOT NULL,
    value               text   NOT NULL,
    last_updated_at_ms  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (instance_id, key)
);

-- Key-value mutations of the running execution; value NULL is a tombstone.
CREATE TABLE __SCHEMA__.kv_delta (
    instance_id         text   NOT NULL,
    key                 text   NOT NULL,
    value               text,
    last_updated_at_ms  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (instance_id, key)
);

-- Poisoned messages are moved here, never deleted.
CREATE TABLE __SCHEMA__.dead_letters (
    id             bigserial   PRIMARY KEY,
    queue          text        NOT NULL CHECK (queue IN ('orchestrator', 'worker')),
    instance_id    text        NOT NULL,
    execution_id   bigint,
    activity_id    bigint,
    attempt_count  integer     NOT NULL,
    max_attempts   integer,
    reason         text        NOT NULL,
    error          text,
    work_item      text        NOT NULL,
    session_id     text,
    tag            text,
    enqueued_at    timestamptz NOT NULL,
    dead_at        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX dead_letters_instance_idx ON __SCHEMA__.dead_letters (instance_id, id);

-- Wake long-polling dispatchers: one notification per inserting statement,
-- on a channel derived from the schema (channel names are limited to 63 bytes).
CREATE FUNCTION __SCHEMA__.notify_enqueued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('steadfast_' || left(md5(TG_TABLE_SCHEMA), 16), TG_ARGV[0]);
    RETURN NULL;
END;
$$;
CREATE TRIGGER orchestrator_queue_notify AFTER INSERT ON __SCHEMA__.orchestrator_queue
    FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.notify_enqueued('o');
CREATE TRIGGER worker_queue_notify AFTER INSERT ON __SCHEMA__.worker_queue
    FOR EACH STATEMENT EXECUTE FUNCTION __SCHEMA__.notify_enqueued('w');
