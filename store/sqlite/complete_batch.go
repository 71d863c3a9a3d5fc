package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/windforce/windforce/spine"
)

// CompleteBatch completes many owned jobs in one BEGIN IMMEDIATE
// transaction (so one commit, one fsync, for the whole batch), each exactly
// as Complete would: fenced on its own claim token. A lost lease gets
// ErrNotOwner in its outcome, writes nothing and does not hold back the
// others; any other failure rolls the whole batch back.
func (s *Driver) CompleteBatch(ctx context.Context, ps []spine.CompleteParams) ([]spine.CompleteOutcome, error) {
	plan := spine.PlanCompleteBatch(ps)
	if len(plan.Todo) == 0 {
		return plan.Outcomes, nil
	}
	statuses := make([]spine.Status, len(ps))
	lost := make([]error, len(ps))
	err := s.write(ctx, func(w *writeTx) error {
		for _, i := range plan.Todo {
			p := ps[i]
			status, err := w.finish(ctx, finishing{
				lease: p.Lease, status: spine.StatusSuccess, result: plan.Results[i], now: resolveNow(p.Now),
			})
			switch {
			case errors.Is(err, spine.ErrNotOwner):
				// The fenced delete found no row, so nothing was written.
				lost[i] = fmt.Errorf("complete job %s: %w", p.JobID, err)
			case err != nil:
				return fmt.Errorf("job %s: %w", p.JobID, err)
			default:
				statuses[i] = status
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("complete batch of %d jobs: %w", len(plan.Todo), err)
	}
	for _, i := range plan.Todo {
		plan.Outcomes[i].Status, plan.Outcomes[i].Err = statuses[i], lost[i]
	}
	return plan.Outcomes, nil
}
