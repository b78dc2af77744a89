UPDATE __SCHEMA__.sessions
SET last_activity_at = clock_timestamp()
WHERE session_id = $1 AND locked_until > clock_timestamp()
