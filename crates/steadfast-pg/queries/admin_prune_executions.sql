-- Delete old executions (and their history) of instances $1 in one atomic statement.
-- Never touched: the current execution or anything after it, Running executions, the
-- $2 most recent executions (NULL = 0; the current one always counts among them), and,
-- with $3, executions that did not complete before that epoch ms. KV is never touched.
-- Returns how many of the instances exist, and what was deleted.
WITH targets AS (
    SELECT instance_id, current_execution_id
    FROM __SCHEMA__.instances
    WHERE instance_id = ANY($1::text[])
), ranked AS (
    SELECT e.instance_id, e.execution_id, e.status, e.completed_at, t.current_execution_id,
           row_number() OVER (PARTITION BY e.instance_id ORDER BY e.execution_id DESC) AS recency
    FROM __SCHEMA__.executions AS e
    JOIN targets AS t ON t.instance_id = e.instance_id
), doomed AS (
    SELECT instance_id, execution_id
    FROM ranked
    WHERE execution_id < current_execution_id
      AND status <> 'Running'
      AND recency > COALESCE($2::int8, 0)
      AND ($3::float8 IS NULL OR completed_at < to_timestamp($3::float8 / 1000.0))
), dropped_history AS (
    DELETE FROM __SCHEMA__.history AS h
    USING doomed AS d
    WHERE h.instance_id = d.instance_id AND h.execution_id = d.execution_id
    RETURNING 1
), dropped_executions AS (
    DELETE FROM __SCHEMA__.executions AS x
    USING doomed AS d
    WHERE x.instance_id = d.instance_id AND x.execution_id = d.execution_id
    RETURNING 1
)
SELECT (SELECT count(*) FROM targets) AS instances,
       (SELECT count(*) FROM dropped_executions) AS executions,
       (SELECT count(*) FROM dropped_history) AS events
