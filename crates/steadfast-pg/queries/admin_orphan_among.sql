-- A child of an instance in $1 that is not itself in $1 (deleting $1 would orphan it).
SELECT instance_id, parent_instance_id
FROM __SCHEMA__.instances
WHERE parent_instance_id = ANY($1::text[])
  AND NOT (instance_id = ANY($1::text[]))
ORDER BY parent_instance_id, instance_id
LIMIT 1
