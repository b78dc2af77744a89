SELECT name, checksum FROM __SCHEMA__.schema_functions
