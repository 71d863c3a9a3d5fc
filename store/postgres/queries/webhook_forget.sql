-- WebhookForget: lazily delete seen signatures too old to be replayed (a
-- request that old fails the timestamp check before it gets here). A
-- bounded batch, skipping rows a concurrent webhook is deleting, so
-- webhooks arriving together never queue on each other's clean-up.
DELETE FROM webhook_seen
WHERE signature IN (
    SELECT signature FROM webhook_seen
    WHERE seen_at < @before::timestamptz
    ORDER BY seen_at
    LIMIT 100
    FOR UPDATE SKIP LOCKED)
