-- Record an applied migration.
INSERT INTO schema_migration (version, name, applied_at) VALUES (:version, :name, :applied_at)
