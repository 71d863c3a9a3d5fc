-- WebhookSeen: record an accepted signature. The primary key is the replay
-- check: a conflict inserts nothing and the caller refuses the request.
-- The one writer connection serializes duplicates.
INSERT INTO webhook_seen (signature, seen_at)
VALUES (:signature, :now)
ON CONFLICT (signature) DO NOTHING
