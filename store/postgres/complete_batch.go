package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// CompleteBatch completes many owned jobs in one statement, each fenced on
// its own claim token (see queries/complete_batch.sql), with their log
// tails: one round trip whatever the batch's size. A lost lease finds no row and gets the empty
// status (driver.QueueExecutor).
func (e *executor) CompleteBatch(ctx context.Context, cs []spine.CompleteParams) ([]spine.Status, error) {
	n := len(cs)
	ids := make([]uuid.UUID, n)
	tokens := make([]uuid.UUID, n)
	results := make([]*string, n)
	nows := make([]*time.Time, n)
	tails := make([]string, n)
	for k, c := range cs {
		ids[k], tokens[k], tails[k] = c.JobID, c.ClaimToken, c.LogTail
		if len(c.Result) > 0 {
			str := string(c.Result)
			results[k] = &str
		}
		if !c.Now.IsZero() {
			now := c.Now
			nows[k] = &now
		}
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qCompleteBatch, namedArgs{
		"job_ids": ids, "claim_tokens": tokens, "results": results, "nows": nows, "tails": tails, "done_channel": e.d.doneChannel,
	})
	if err != nil {
		return nil, translate(err)
	}
	done := make(map[spine.Lease]spine.Status, n)
	var l spine.Lease
	var status string
	_, err = pgx.ForEachRow(rows, []any{&l.JobID, &l.ClaimToken, &status}, func() error {
		done[l] = spine.Status(status)
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	statuses := make([]spine.Status, n)
	for k, c := range cs {
		statuses[k] = done[c.Lease]
	}
	return statuses, nil
}
