INSERT INTO __SCHEMA__.schema_functions (name, checksum) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = clock_timestamp()
