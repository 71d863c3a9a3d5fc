-- Whether the schema_migration table exists: a database never migrated has
-- none, and a query on it would fail.
SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migration')
