SELECT __SCHEMA__.release_lease($1)
