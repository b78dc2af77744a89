INSERT INTO __SCHEMA__.schema_functions (name, checksum, revision) VALUES ($1, $2, $3)
ON CONFLICT (name) DO UPDATE
SET checksum = EXCLUDED.checksum, revision = EXCLUDED.revision, applied_at = clock_timestamp()
