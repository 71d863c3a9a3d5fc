package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// A FailBatch is three round trips however large the batch: LockLeases
// locks every lease and reads what the core decides on in one statement,
// and WriteFailures sends the retries and final failures together in one
// pipelined pgx batch, with one completion wake-up for all.

// LockLeases runs lock_leases.sql for ls and returns the state of each
// lease still owned (driver.QueueExecutor).
func (e *executor) LockLeases(ctx context.Context, ls []driver.LeaseAt) (map[spine.Lease]driver.LeaseState, error) {
	ids := make([]uuid.UUID, len(ls))
	tokens := make([]uuid.UUID, len(ls))
	nows := make([]*time.Time, len(ls))
	for k, l := range ls {
		ids[k], tokens[k] = l.JobID, l.ClaimToken
		if !l.Now.IsZero() {
			// Only a time given is copied to the heap.
			now := l.Now
			nows[k] = &now
		}
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qLockLeases, namedArgs{"job_ids": ids, "claim_tokens": tokens, "nows": nows})
	if err != nil {
		return nil, translate(err)
	}
	locked := make(map[spine.Lease]driver.LeaseState, len(ls))
	var (
		l           spine.Lease
		st          driver.LeaseState
		maxAttempts int
		backoffMS   int64
		factor      float64
	)
	_, err = pgx.ForEachRow(rows, []any{&l.JobID, &l.ClaimToken, &st.Attempt, &st.Canceled, &maxAttempts, &backoffMS, &factor, &st.Now}, func() error {
		st.Retry = retryPolicy(maxAttempts, backoffMS, factor)
		locked[l] = st
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	return locked, nil
}

// WriteFailures writes fs in one pipelined batch of requeue.sql and
// complete.sql, and one coalesced completion wake-up (notify.sql) for the
// jobs it finished (driver.QueueExecutor).
func (e *executor) WriteFailures(ctx context.Context, fs []driver.Failure) ([]spine.Status, error) {
	if len(fs) == 0 {
		return nil, nil
	}
	var batch pgx.Batch
	var finished []uuid.UUID
	for _, f := range fs {
		if f.Retry {
			batch.Queue(qRequeue, e.d.requeueArgs(driver.Requeue{
				Lease: f.Lease, AttemptStep: 1, LastError: f.Error, ScheduledFor: f.At,
			}))
			continue
		}
		batch.Queue(qComplete, e.d.completeArgs(f.Lease, spine.StatusFailure, nil, f.Error, f.At, false))
		finished = append(finished, f.JobID)
	}
	if len(finished) > 0 {
		// One coalesced completion wake-up for the whole transaction.
		batch.Queue(qNotify, namedArgs{"channel": e.d.doneChannel, "payloads": donePayloads(finished)})
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	results := e.q.SendBatch(ctx, &batch)
	statuses := make([]spine.Status, len(fs))
	for k, f := range fs {
		// Every row is locked by this transaction: each statement finds it.
		var got string
		if err := results.QueryRow().Scan(&got); err != nil {
			results.Close() //nolint:errcheck
			if errors.Is(err, pgx.ErrNoRows) {
				err = fmt.Errorf("job %s changed under its lock: %w", f.JobID, spine.ErrNotOwner)
			}
			return nil, translate(err)
		}
		if !f.Retry {
			statuses[k] = spine.Status(got)
		}
	}
	if err := results.Close(); err != nil {
		return nil, translate(err)
	}
	return statuses, nil
}
