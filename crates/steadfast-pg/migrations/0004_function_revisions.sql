-- The revision of each installed server-side function (functions/revisions.txt): a build
-- installs its own only over an older one, so an older build starting during a rolling
-- upgrade leaves a newer build's functions in place. 0: recorded before revisions existed.
ALTER TABLE __SCHEMA__.schema_functions ADD COLUMN revision integer NOT NULL DEFAULT 0;
