-- DeliveryRetryNow: the sink is back; its pending deliveries waiting out
-- a backoff are due now (event_delivery_pending).
UPDATE event_delivery
SET next_attempt_at = coalesce(@now::timestamptz, now())
WHERE workspace = @workspace AND sink_id = @sink_id AND status = 'pending'
  AND next_attempt_at > coalesce(@now::timestamptz, now())
