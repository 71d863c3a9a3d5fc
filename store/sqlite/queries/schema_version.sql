-- The highest applied migration.
SELECT coalesce(max(version), 0) FROM schema_migration
