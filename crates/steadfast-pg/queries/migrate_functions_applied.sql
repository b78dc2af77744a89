SELECT name, checksum, revision FROM __SCHEMA__.schema_functions
