-- The zombie timeout the queue_health view counts expired heartbeats with.
INSERT INTO spine_setting (key, value) VALUES ('zombie_timeout_ms', :ms)
ON CONFLICT (key) DO UPDATE SET value = excluded.value
