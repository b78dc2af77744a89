-- Terminal history events per execution (exactly one each is expected).
SELECT instance_id, execution_id, count(*)::int8
FROM __SCHEMA__.history
WHERE event_type IN ('OrchestrationCompleted', 'OrchestrationFailed', 'OrchestrationContinuedAsNew')
GROUP BY instance_id, execution_id
