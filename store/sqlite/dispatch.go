package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// SQLite does not dispatch at enqueue (spine/dispatch.go): the enqueue and
// the worker share the process and the one writer, and a claim costs no
// network round trip. ReadDispatched and Owned still answer for what a
// claim made, as on a store that dispatches.

// SubscribeDispatch returns an inbox that never fills.
func (s *Driver) SubscribeDispatch(string) (*spine.Inbox, func()) {
	var d spine.Dispatches
	return d.Subscribe("")
}

// ReadDispatched reads the job of lease l while worker owns it running, on
// the reader pool: its queue row (dispatched_lease.sql), then its pin
// (claim_jobs.sql) (driver.QueueExecutor).
func (e *executor) ReadDispatched(ctx context.Context, worker string, l spine.Lease) (spine.ClaimedJob, error) {
	var j spine.ClaimedJob
	var startedAt int64
	rows, err := e.read(ctx, qDispatchedLease, sql.Named("id", l.JobID), sql.Named("token", l.ClaimToken), sql.Named("worker", worker))
	if err != nil {
		return j, err
	}
	found, err := collect(rows, func(rows *sql.Rows) (spine.ClaimedJob, error) {
		err := rows.Scan(&j.ID, &j.Workspace, &j.Priority, &j.ClaimToken, &j.Attempt, &j.Restarts, &startedAt, &j.Generation)
		return j, err
	})
	if err != nil {
		return j, fmt.Errorf("read lease: %w", err)
	}
	if len(found) == 0 {
		return j, spine.ErrNotOwner
	}
	j.StartedAt = fromMicros(startedAt)
	rows, err = e.read(ctx, qClaimJobs, sql.Named("ids", idsJSON([]uuid.UUID{l.JobID})))
	if err != nil {
		return j, err
	}
	pins, err := collect(rows, scanPinned)
	if err != nil {
		return j, fmt.Errorf("read pin: %w", err)
	}
	if len(pins) != 1 {
		return j, errors.New("read pin: the job has a queue row but no job row")
	}
	pins[0].fill(&j)
	return j, nil
}

// Withdraw has no offer to delete (driver.QueueExecutor).
func (e *executor) Withdraw(context.Context, string) error { return nil }

// Owned reads the leases of the running jobs worker owns, on the reader
// pool (driver.QueueExecutor).
func (e *executor) Owned(ctx context.Context, worker string) ([]spine.Lease, error) {
	rows, err := e.read(ctx, qOwnedLeases, sql.Named("worker", worker))
	if err != nil {
		return nil, err
	}
	return collect(rows, func(rows *sql.Rows) (spine.Lease, error) {
		var l spine.Lease
		return l, rows.Scan(&l.JobID, &l.ClaimToken)
	})
}
