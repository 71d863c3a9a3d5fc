package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/windforce/windforce/spine"
)

// CompleteBatch completes many owned jobs in one BEGIN IMMEDIATE
// transaction on the pool (so one commit, one fsync, for the whole batch),
// each exactly as Complete would: fenced on its own claim token. A lost
// lease gets the empty status and writes nothing; any other failure rolls
// the whole batch back (driver.QueueExecutor).
func (e *executor) CompleteBatch(ctx context.Context, cs []spine.CompleteParams) ([]spine.Status, error) {
	statuses := make([]spine.Status, len(cs))
	err := e.write(ctx, func(w *writeTx) error {
		for k, c := range cs {
			status, err := w.finish(ctx, finishing{
				lease: c.Lease, status: spine.StatusSuccess, result: c.Result, now: resolveNow(c.Now),
			})
			switch {
			case errors.Is(err, spine.ErrNotOwner):
				// The fenced delete found no row, so nothing was written.
			case err != nil:
				return fmt.Errorf("job %s: %w", c.JobID, err)
			default:
				statuses[k] = status
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return statuses, nil
}
