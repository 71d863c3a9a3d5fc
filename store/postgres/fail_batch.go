package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// FailBatch records many failed attempts in one transaction, so one commit
// (see spine.Store), in three round trips however large the batch: one
// statement locks every lease and reads what Fail decides on
// (lock_leases.sql), the decisions are made here as Fail makes them, and
// the retries and final failures go out together in one pipelined pgx
// batch. A lost lease writes nothing and the others go on.
func (s *Driver) FailBatch(ctx context.Context, ps []spine.FailParams) ([]spine.FailBatchOutcome, error) {
	plan := spine.PlanFailBatch(ps)
	if len(plan.Todo) == 0 {
		return plan.Outcomes, nil
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		locked, err := lockLeases(ctx, tx, ps, plan.Todo)
		if err != nil {
			return err
		}
		return s.writeFailures(ctx, tx, ps, &plan, locked)
	})
	if err != nil {
		return nil, fmt.Errorf("fail batch of %d jobs: %w", len(plan.Todo), err)
	}
	return plan.Outcomes, nil
}

// lockLeases runs lock_leases.sql for the requests at todo and returns the
// state of each lease still owned.
func lockLeases(ctx context.Context, tx pgx.Tx, ps []spine.FailParams, todo []int) (map[spine.Lease]leaseState, error) {
	ids := make([]uuid.UUID, len(todo))
	tokens := make([]uuid.UUID, len(todo))
	nows := make([]*time.Time, len(todo))
	for k, i := range todo {
		ids[k], tokens[k] = ps[i].JobID, ps[i].ClaimToken
		if !ps[i].Now.IsZero() {
			now := ps[i].Now
			nows[k] = &now
		}
	}
	rows, err := tx.Query(ctx, qLockLeases, pgx.StrictNamedArgs{"job_ids": ids, "claim_tokens": tokens, "nows": nows})
	if err != nil {
		return nil, translate(err)
	}
	locked := make(map[spine.Lease]leaseState, len(todo))
	var (
		l           spine.Lease
		st          leaseState
		maxAttempts int
		backoffMS   int64
		factor      float64
	)
	_, err = pgx.ForEachRow(rows, []any{&l.JobID, &l.ClaimToken, &st.attempt, &st.canceled, &maxAttempts, &backoffMS, &factor, &st.now}, func() error {
		st.policy = retryPolicy(maxAttempts, backoffMS, factor)
		locked[l] = st
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	return locked, nil
}

// writeFailures decides each locked job's fate as Fail does and writes
// them all in one pipelined batch of requeue.sql and complete.sql.
func (s *Driver) writeFailures(ctx context.Context, tx pgx.Tx, ps []spine.FailParams, plan *spine.FailBatchPlan, locked map[spine.Lease]leaseState) error {
	var batch pgx.Batch
	var queued []int
	var finished []uuid.UUID // every lease not retried ends here
	for _, i := range plan.Todo {
		p := ps[i]
		st, ok := locked[p.Lease]
		if !ok {
			plan.Outcomes[i].Err = fmt.Errorf("fail job %s: %w", p.JobID, spine.ErrNotOwner)
			continue
		}
		queued = append(queued, i)
		if at, retry := spine.NextRetry(st.policy, st.attempt, st.now); retry && !st.canceled {
			at = at.UTC().Truncate(time.Microsecond)
			plan.Outcomes[i].FailOutcome = spine.FailOutcome{Retried: true, NextAttempt: st.attempt + 1, ScheduledFor: at}
			batch.Queue(qRequeue, pgx.StrictNamedArgs{
				"job_id": p.JobID, "claim_token": p.ClaimToken, "attempt_step": 1,
				"last_error": plan.Errors[i], "scheduled_for": at, "channel": s.channel,
			})
			continue
		}
		batch.Queue(qComplete, s.completeArgs(p.Lease, spine.StatusFailure, nil, plan.Errors[i], st.now, false))
		finished = append(finished, p.JobID)
	}
	if len(queued) == 0 {
		return nil
	}
	if len(finished) > 0 {
		// One coalesced completion wake-up for the whole transaction.
		batch.Queue(qNotify, pgx.StrictNamedArgs{"channel": s.doneChannel, "payloads": donePayloads(finished)})
	}
	results := tx.SendBatch(ctx, &batch)
	for _, i := range queued {
		// Every row is locked by this transaction: each statement finds it.
		var got string
		if err := results.QueryRow().Scan(&got); err != nil {
			results.Close() //nolint:errcheck
			if errors.Is(err, pgx.ErrNoRows) {
				err = fmt.Errorf("job %s changed under its lock: %w", ps[i].JobID, spine.ErrNotOwner)
			}
			return translate(err)
		}
		if !plan.Outcomes[i].Retried {
			plan.Outcomes[i].Status = spine.Status(got)
		}
	}
	return translate(results.Close())
}
