-- RelayCursor: the last outbox seq whose deliveries exist.
SELECT fanned_seq FROM event_relay WHERE id = 1
