-- Wake-up notifications for other processes (src/wake.rs), one statement for all that
-- are pending. $1 the schema's channel (queries/notify_channel.sql), $2 its payload
-- (queues and sender; NULL = none), $3 the ended-executions channel ($1 || '_end'),
-- $4 the ended instances (ids cut to 1000 characters).
SELECT pg_notify($1, $2) WHERE $2 IS NOT NULL
UNION ALL
SELECT pg_notify($3, ended) FROM unnest($4::text[]) AS ended
