-- Heartbeat live, non-idle sessions of the given owners. $1 owners, $2 extend ms, $3 idle ms.
UPDATE __SCHEMA__.sessions
SET locked_until = clock_timestamp() + $2::float8 * interval '1 millisecond'
WHERE worker_id = ANY($1::text[])
  AND locked_until > clock_timestamp()
  AND last_activity_at + $3::float8 * interval '1 millisecond' > clock_timestamp()
