SELECT __SCHEMA__.touch_session($1)
