package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// CompleteBatch completes many owned jobs in one statement, each fenced on
// its own claim token (see queries/complete_batch.sql). A lost lease gets
// ErrNotOwner in its outcome and does not hold back the others.
func (s *Driver) CompleteBatch(ctx context.Context, ps []spine.CompleteParams) ([]spine.CompleteOutcome, error) {
	plan := spine.PlanCompleteBatch(ps)
	if len(plan.Todo) == 0 {
		return plan.Outcomes, nil
	}
	n := len(plan.Todo)
	ids := make([]uuid.UUID, n)
	tokens := make([]uuid.UUID, n)
	results := make([]*string, n)
	nows := make([]*time.Time, n)
	for k, i := range plan.Todo {
		p := ps[i]
		ids[k], tokens[k] = p.JobID, p.ClaimToken
		if r := plan.Results[i]; len(r) > 0 {
			str := string(r)
			results[k] = &str
		}
		if !p.Now.IsZero() {
			now := p.Now
			nows[k] = &now
		}
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qCompleteBatch, pgx.StrictNamedArgs{
		"job_ids": ids, "claim_tokens": tokens, "results": results, "nows": nows, "done_channel": s.doneChannel,
	})
	if err != nil {
		return nil, fmt.Errorf("complete batch of %d jobs: %w", n, translate(err))
	}
	done := make(map[spine.Lease]spine.Status, n)
	var l spine.Lease
	var status string
	_, err = pgx.ForEachRow(rows, []any{&l.JobID, &l.ClaimToken, &status}, func() error {
		done[l] = spine.Status(status)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("complete batch of %d jobs: %w", n, translate(err))
	}
	for _, i := range plan.Todo {
		if st, ok := done[ps[i].Lease]; ok {
			plan.Outcomes[i].Status = st
			continue
		}
		plan.Outcomes[i].Err = fmt.Errorf("complete job %s: %w", ps[i].JobID, spine.ErrNotOwner)
	}
	return plan.Outcomes, nil
}
