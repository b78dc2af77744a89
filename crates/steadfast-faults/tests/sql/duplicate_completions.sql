-- Scheduled activities or timers with more than one completion in history.
SELECT instance_id, execution_id, event_data::jsonb ->> 'source_event_id', count(*)::int8
FROM __SCHEMA__.history
WHERE event_type IN ('ActivityCompleted', 'ActivityFailed', 'TimerFired')
GROUP BY 1, 2, 3
HAVING count(*) > 1
