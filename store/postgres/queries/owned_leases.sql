-- OwnedLeases reads the leases of every running job @worker owns
-- (job_queue_worker): after a reconnect of the listener, the dispatches
-- whose notification was lost; after withdraw_offer.sql, in a statement
-- of its own (under READ COMMITTED it sees every dispatch committed
-- before the delete), the ones a stopping worker must release.
SELECT job_id, claim_token
FROM job_queue
WHERE worker = @worker AND running
