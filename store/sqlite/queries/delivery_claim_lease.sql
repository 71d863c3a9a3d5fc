-- DeliveryClaim, second step: lease the picked rows (a JSON array of
-- event seqs) for one attempt.
UPDATE event_delivery
SET lease = :lease, leased_until = :leased_until, attempts = attempts + 1
WHERE workspace = :workspace AND sink_id = :sink_id
  AND event_seq IN (SELECT value FROM json_each(:seqs))
