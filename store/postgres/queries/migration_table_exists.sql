-- MigrationTableExists says whether any migration was ever applied here.
SELECT to_regclass('schema_migration') IS NOT NULL
