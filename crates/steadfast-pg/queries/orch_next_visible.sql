-- Milliseconds until the next instance whose earliest ready message is delayed becomes a
-- claim candidate (instance_leases.ready_at and ready_hints, migration 0009; NULL if
-- none). Waiting messages (migration 0006) make no work when they become visible.
SELECT (EXTRACT(EPOCH FROM (min(n.at) - clock_timestamp())) * 1000)::float8
FROM (
    SELECT min(l.ready_at) AS at
    FROM __SCHEMA__.instance_leases AS l
    WHERE l.ready_at > clock_timestamp()
    UNION ALL
    SELECT min(h.visible_at)
    FROM __SCHEMA__.ready_hints AS h
    WHERE h.visible_at > clock_timestamp()
) AS n
