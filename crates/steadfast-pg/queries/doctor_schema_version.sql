-- doctor: the schema's version, the last migration the provider recorded. One row: version.
SELECT max(version)::float8 AS version FROM __SCHEMA__.schema_migrations
