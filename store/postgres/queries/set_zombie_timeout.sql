-- SetZombieTimeout records the zombie timeout queue_health counts with.
INSERT INTO spine_setting (key, value) VALUES ('zombie_timeout_ms', @zombie_timeout_ms::bigint)
ON CONFLICT (key) DO UPDATE SET value = excluded.value
