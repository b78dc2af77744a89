-- Instance $1 (always, like the trait's default) and all its descendants, root first,
-- then by depth. The path guard stops on a corrupt parent cycle instead of looping.
WITH RECURSIVE tree (instance_id, path) AS (
    SELECT $1::text, ARRAY[$1::text]
    UNION ALL
    SELECT c.instance_id, t.path || c.instance_id
    FROM tree AS t
    JOIN __SCHEMA__.instances AS c ON c.parent_instance_id = t.instance_id
    WHERE c.instance_id <> ALL (t.path)
)
SELECT instance_id
FROM tree
ORDER BY cardinality(path), instance_id
