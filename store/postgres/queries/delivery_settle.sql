-- DeliverySettle: the end of one attempt, fenced on its lease: a lease
-- that ran out and was taken by another attempt changes nothing.
UPDATE event_delivery
SET status = @status, lease = NULL, leased_until = NULL,
    last_error = CASE WHEN @last_error::text = '' THEN last_error ELSE @last_error END,
    next_attempt_at = coalesce(@next_attempt_at::timestamptz, next_attempt_at),
    delivered_at = CASE WHEN @status = 'delivered' THEN coalesce(@now::timestamptz, now()) END,
    failed_at = CASE WHEN @status = 'failed' THEN coalesce(@now::timestamptz, now()) END
WHERE workspace = @workspace AND sink_id = @sink_id AND event_seq = @event_seq
  AND lease = @lease AND status = 'pending'
