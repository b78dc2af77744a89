-- doctor: the schema named $1 from pg_catalog. One row, or none when it does not exist:
-- oid, and tables (JSON: each table's name to its columns' names to their types).
SELECT n.oid,
       COALESCE((SELECT json_object_agg(t.relname, t.columns)
                 FROM (SELECT c.relname,
                              json_object_agg(a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)) AS columns
                       FROM pg_catalog.pg_class AS c
                       JOIN pg_catalog.pg_attribute AS a
                         ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
                       WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p')
                       GROUP BY c.relname) AS t), '{}') AS tables
FROM pg_catalog.pg_namespace AS n
WHERE n.nspname = $1
