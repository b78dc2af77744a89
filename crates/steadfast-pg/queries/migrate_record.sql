INSERT INTO __SCHEMA__.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)
