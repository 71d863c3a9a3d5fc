-- WebhookForget: lazily delete seen signatures too old to be replayed (a
-- request that old fails the timestamp check before it gets here).
DELETE FROM webhook_seen
WHERE seen_at < :before
