-- Health reads the queue_health view, one row per workspace and tag.
SELECT workspace, tag, waiting, scheduled, running, failed_24h, expired_heartbeats,
       oldest_waiting_seconds, max_attempt, max_restarts
FROM queue_health
ORDER BY workspace, tag
