-- AppliedVersion reads the highest applied migration; 0 before the first.
SELECT coalesce(max(version), 0) FROM schema_migration
