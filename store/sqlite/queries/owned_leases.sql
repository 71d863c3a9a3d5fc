-- Withdraw's read: the leases of every running job :worker owns.
SELECT job_id, claim_token
FROM job_queue
WHERE worker = :worker AND running = 1
