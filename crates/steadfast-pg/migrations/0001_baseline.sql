-- steadfast-pg schema, version 1: the baseline (the unreleased migrations 0001-0009 folded
-- into one). Every table lives in the provider's own schema (__SCHEMA__ is replaced by the
-- validated, quoted schema name before this file runs). Migrations change schema only and
-- are never edited once they have landed: add a new numbered file instead. Server-side
-- functions, and the triggers that call them, live in functions/ (one per file) and are
-- installed after the migrations whenever their text changes (migrate.rs).

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

-- One row per incarnation of an instance id: created by the first enqueue to the id,
-- removed when the instance is deleted (or its orphaned messages are dead-lettered), so a
-- re-created instance gets a new row. The row exists before any claim, so a claim only
-- ever takes a row lock with SKIP LOCKED and never waits on another transaction. A lease
-- is live while lock_token is set and locked_until is in the future by the database
-- clock. A lease that ran out without ack or abandon keeps its token: the instance is
-- eligible again only after locked_until + backoff(attempt_count, backoff_jitter).
--   runnable_from: when the instance's queued messages may first be claimed:
--     '-infinity' once it has been started (it has an instance row or history), the
--     visibility time of its earliest queued start while it has not, NULL while nothing
--     has started it.
--   generation: never reused (an identity column's sequence), so lock tokens, which
--     carry it (claim_orchestration), tell incarnations of one id apart and a disposition
--     from an older one is refused.
--   ready_at: when the instance's earliest ready (not waiting) orchestrator message
--     becomes visible, or earlier; NULL while it has none. Lowered by every enqueue
--     (enqueue_orchestrator) and by the orphan sweep, set to the truth by settle_ready_at
--     when no enqueue is in flight (functions/settle_ready_at.sql has the rule that makes
--     this safe). The claim scans ready instances, not messages, so no number of messages
--     queued for one instance costs a claim of another anything.
CREATE TABLE __SCHEMA__.instance_leases (
    instance_id     text        PRIMARY KEY,
    lock_token      text,
    locked_until    timestamptz,
    locked_at       timestamptz,
    attempt_count   integer     NOT NULL DEFAULT 0,
    backoff_jitter  real        NOT NULL DEFAULT 0,
    runnable_from   timestamptz,
    generation      bigint      NOT NULL GENERATED ALWAYS AS IDENTITY,
    ready_at        timestamptz
);
CREATE UNIQUE INDEX instance_leases_token_idx ON __SCHEMA__.instance_leases (lock_token)
    WHERE lock_token IS NOT NULL;
CREATE INDEX instance_leases_ready_idx ON __SCHEMA__.instance_leases (ready_at)
    WHERE ready_at IS NOT NULL;

-- waiting: the message became visible before its instance was runnable (enqueued to an
-- instance nothing has started, or ahead of a delayed start). Waiting messages are not
-- claim candidates, so no number of them costs a claim anything; the claim of their
-- instance's start takes them along. Those whose instance nothing starts within
-- claim.orphan_timeout are dead-lettered as 'orphaned' (functions/sweep_orphans.sql).
CREATE TABLE __SCHEMA__.orchestrator_queue (
    id             bigserial   PRIMARY KEY,
    instance_id    text        NOT NULL,
    work_item      text        NOT NULL,
    visible_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    lock_token     text,
    attempt_count  integer     NOT NULL DEFAULT 0 CHECK (attempt_count >= 0),
    created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
    waiting        boolean     NOT NULL DEFAULT false
);
-- One instance's messages in visibility order: its batch, and its earliest ready message.
CREATE INDEX orchestrator_queue_instance_idx
    ON __SCHEMA__.orchestrator_queue (instance_id, visible_at, id);
CREATE INDEX orchestrator_queue_token_idx ON __SCHEMA__.orchestrator_queue (lock_token)
    WHERE lock_token IS NOT NULL;
-- The orphan sweep walks waiting messages.
CREATE INDEX orchestrator_queue_waiting_idx ON __SCHEMA__.orchestrator_queue (visible_at, id)
    WHERE waiting;

-- A ready message whose enqueue could not lower its instance's ready_at without waiting
-- for a lock (or found no lease row): the claim scans these as well, settle_ready_at
-- removes them once ready_at covers their messages. Normally empty or nearly so.
CREATE TABLE __SCHEMA__.ready_hints (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    instance_id text        NOT NULL,
    visible_at  timestamptz NOT NULL
);
CREATE INDEX ready_hints_instance_idx ON __SCHEMA__.ready_hints (instance_id);
CREATE INDEX ready_hints_visible_idx ON __SCHEMA__.ready_hints (visible_at);

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
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    -- When the lease began, so that renewals stop at claim.max_activity_duration.
    locked_at       timestamptz
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

-- Which version of each server-side function file is installed (see migrate.rs).
CREATE TABLE __SCHEMA__.schema_functions (
    name        text        PRIMARY KEY,
    checksum    text        NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
