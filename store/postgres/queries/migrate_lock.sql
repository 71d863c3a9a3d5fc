-- MigrateLock serializes migrations of one schema across every server for
-- the rest of the transaction.
SELECT pg_advisory_xact_lock(hashtext('windforce.migrate.' || current_schema()))
