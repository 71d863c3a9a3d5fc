package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
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

// enqueuedRow is what enqueue.sql returns: the job, and for a job it
// dispatched, the lease and start it wrote.
type enqueuedRow struct {
	id         uuid.UUID
	generation int64
	token      *uuid.UUID
	worker     string
	startedAt  *time.Time
}

func (r *enqueuedRow) scan(row pgx.Row) error {
	var worker *string
	if err := row.Scan(&r.id, &r.generation, &r.token, &worker, &r.startedAt); err != nil {
		return err
	}
	if worker != nil {
		r.worker = *worker
	}
	return nil
}

// dispatched is the job the enqueue of p dispatched, as ReadDispatched
// would read it, so that an enqueue in its worker's process can hand it
// over (spine.Dispatches.Expect); nil when it dispatched nothing or err
// leaves it unknown. The pin goes through the codecs of its columns
// (insertArgs there, scanClaimed back), so it is what a read would give;
// only JSON may differ in form (jsonb orders keys), never in meaning.
func (r *enqueuedRow) dispatched(p spine.EnqueueParams, err error) *spine.ClaimedJob {
	if err != nil || r.token == nil || r.startedAt == nil {
		return nil
	}
	pin := p.Pin
	pin.InputSchema, pin.OutputSchema = compactJSON(pin.InputSchema), compactJSON(pin.OutputSchema)
	pin.Timeout = pin.Timeout.Truncate(time.Millisecond)
	pin.Retry = retryPolicy(pin.Retry.MaxAttempts, max(1, pin.Retry.Backoff.Milliseconds()), pin.Retry.Factor)
	// A limit not set (not positive) is stored NULL and read back as zero.
	pin.Limits = spine.Limits{Memory: max(0, pin.Limits.Memory), Pids: max(0, pin.Limits.Pids), CPU: max(0, pin.Limits.CPU)}
	if err := (pinCols{env: spine.EnvColumn(pin.Env), warm: spine.WarmColumn(pin.Warm)}).apply(&pin); err != nil {
		return nil // the worker reads it instead
	}
	at := r.startedAt.UTC()
	return &spine.ClaimedJob{
		ID: r.id, Workspace: p.Workspace, TriggerKind: p.TriggerKind, TriggerRef: p.TriggerRef,
		CreatedBy: p.CreatedBy, Input: compactJSON(p.Input), Pin: pin, Priority: p.Priority,
		ClaimToken: *r.token, Attempt: 1, CreatedAt: at, StartedAt: at, Generation: r.generation,
	}
}

func scanLease(row pgx.CollectableRow) (spine.Lease, error) {
	var l spine.Lease
	err := row.Scan(&l.JobID, &l.ClaimToken)
	return l, err
}
