-- The LISTEN channel for this schema; must match the notify_enqueued() trigger.
SELECT 'steadfast_' || left(md5($1), 16)
