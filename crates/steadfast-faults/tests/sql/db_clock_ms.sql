SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8
