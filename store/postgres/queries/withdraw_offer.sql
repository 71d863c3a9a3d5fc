-- WithdrawOffer deletes @worker's offer (migration 0022): no enqueue
-- dispatches to it after this commits. An enqueue holding the offer's
-- lock commits its dispatch first (the delete waits for it).
DELETE FROM worker_offer WHERE worker = @worker
