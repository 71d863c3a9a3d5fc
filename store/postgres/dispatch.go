package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// Dispatch at enqueue (spine/dispatch.go, migration 0022): the claim
// leaves the offer (claim.sql), the enqueue takes it (enqueue.sql), the
// listener routes the notification (listen.go), and the two operations
// here read the dispatched job and end the offer.

// offerMillis is the claim's @offer_ms: the offer's life, or 0 for none
// (none asked, or no listener to hear the dispatches).
func offerMillis(d time.Duration, listening bool) int64 {
	if d <= 0 || !listening {
		return 0
	}
	return max(1, d.Milliseconds())
}

// ReadDispatched reads the job of lease l while worker owns it running
// (queries/read_dispatched.sql): one round trip, no write
// (driver.QueueExecutor).
func (e *executor) ReadDispatched(ctx context.Context, worker string, l spine.Lease) (spine.ClaimedJob, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qReadDispatched, namedArgs{
		"job_id": l.JobID, "claim_token": l.ClaimToken, "worker": worker,
	})
	if err != nil {
		return spine.ClaimedJob{}, translate(err)
	}
	job, err := pgx.CollectExactlyOneRow(rows, scanClaimed)
	if errors.Is(err, pgx.ErrNoRows) {
		return spine.ClaimedJob{}, spine.ErrNotOwner
	}
	if err != nil {
		return spine.ClaimedJob{}, translate(err)
	}
	return job, nil
}

// Withdraw deletes worker's offer (queries/withdraw_offer.sql)
// (driver.QueueExecutor).
func (e *executor) Withdraw(ctx context.Context, worker string) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	if _, err := e.q.Exec(ctx, qWithdrawOffer, namedArgs{"worker": worker}); err != nil {
		return translate(err)
	}
	return nil
}

// Owned reads the leases worker owns (queries/owned_leases.sql). Under
// READ COMMITTED its snapshot is taken when it starts: after a Withdraw
// that returned, it sees every dispatch to worker (driver.QueueExecutor).
func (e *executor) Owned(ctx context.Context, worker string) ([]spine.Lease, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qOwnedLeases, namedArgs{"worker": worker})
	if err != nil {
		return nil, translate(err)
	}
	leases, err := pgx.CollectRows(rows, scanLease)
	if err != nil {
		return nil, translate(err)
	}
	return leases, nil
}

func scanLease(row pgx.CollectableRow) (spine.Lease, error) {
	var l spine.Lease
	err := row.Scan(&l.JobID, &l.ClaimToken)
	return l, err
}
