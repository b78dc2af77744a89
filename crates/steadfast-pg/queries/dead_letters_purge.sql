-- $1 instance (NULL = all), $2 dead before epoch ms (NULL = any time).
DELETE FROM __SCHEMA__.dead_letters
WHERE ($1::text IS NULL OR instance_id = $1)
  AND ($2::float8 IS NULL OR dead_at < to_timestamp($2::float8 / 1000.0))
