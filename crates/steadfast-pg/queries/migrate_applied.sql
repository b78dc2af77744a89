SELECT version, checksum FROM __SCHEMA__.schema_migrations ORDER BY version
