-- Paged listing of instances, newest first (queries/admin_instances_page.sql).
CREATE INDEX instances_created_idx ON __SCHEMA__.instances (created_at, instance_id);
