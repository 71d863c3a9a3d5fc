-- WebhookSeen: record an accepted signature. The primary key is the replay
-- check: a conflict inserts nothing and the caller refuses the request. A
-- concurrent duplicate waits on the key until the first one commits or
-- rolls back, so exactly one of them enqueues.
INSERT INTO webhook_seen (signature, seen_at)
VALUES (@signature, coalesce(@now::timestamptz, now()))
ON CONFLICT (signature) DO NOTHING
