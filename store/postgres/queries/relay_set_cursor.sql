-- RelaySetCursor: move the fan-out cursor.
UPDATE event_relay SET fanned_seq = @seq WHERE id = 1
