-- DeliveryClaim, third step: the events of the picked deliveries (:seqs,
-- a JSON array of event seqs), built by event_view. Each outbox row that
-- holds one of them (the first row whose seq, its last event's, is not
-- below it) is found on the primary key and expanded once.
SELECT seq, id, nth, workspace, type, subject, time, data
FROM event_view
WHERE row_seq IN (SELECT (SELECT min(o.seq) FROM event_outbox AS o WHERE o.seq >= s.value)
                  FROM json_each(:seqs) AS s)
  AND seq IN (SELECT value FROM json_each(:seqs))
