-- What a status read needs of the instance's latest execution (execution 1 when it has
-- none), in one statement and one walk of its history: its last completed-or-failed event,
-- whether it has a start event, and the instance's custom status. The same answer as
-- reading the whole history and the custom status apart (duroxide's
-- `Client::get_orchestration_status`), without sending and decoding every event.
SELECT
    events.terminal_event,
    COALESCE(events.started, false) AS started,
    i.custom_status,
    COALESCE(i.custom_status_version, 0) AS custom_status_version
FROM (SELECT COALESCE(max(e.execution_id), 1) AS execution_id
      FROM __SCHEMA__.executions AS e
      WHERE e.instance_id = $1) AS latest
CROSS JOIN LATERAL (
    SELECT (array_agg(h.event_data ORDER BY h.event_id DESC)
                FILTER (WHERE h.event_type <> 'OrchestrationStarted'))[1] AS terminal_event,
           bool_or(h.event_type = 'OrchestrationStarted') AS started
    FROM __SCHEMA__.history AS h
    WHERE h.instance_id = $1
      AND h.execution_id = latest.execution_id
      AND h.event_type IN ('OrchestrationStarted', 'OrchestrationCompleted',
                           'OrchestrationFailed')
) AS events
LEFT JOIN __SCHEMA__.instances AS i ON i.instance_id = $1
