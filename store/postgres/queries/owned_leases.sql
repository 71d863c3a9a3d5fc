-- OwnedLeases reads the leases of every running job @worker owns
-- (job_queue_worker). Run after withdraw_offer.sql, in a statement of its
-- own: under READ COMMITTED it sees every dispatch committed before the
-- delete.
SELECT job_id, claim_token
FROM job_queue
WHERE worker = @worker AND running
