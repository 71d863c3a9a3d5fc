package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// Claim takes up to p.Limit waiting jobs on p.Tags in one statement
// (queries/claim.sql): one round trip (driver.QueueExecutor).
//
// On the pool the statement goes in one batch after genericPlan, so the
// batch's implicit transaction runs it with the plan prepared once per
// connection. Left to choose, Postgres keeps planning the claim afresh at
// every call (its custom plans look cheaper than the generic one), which
// cost 1.1–1.9 ms a claim against 0.35 ms to run it: the largest step of
// a warm job's round trip. Inside a caller's transaction it runs as it
// is: SET LOCAL would outlive the claim there.
func (e *executor) Claim(ctx context.Context, p spine.ClaimParams) ([]spine.ClaimedJob, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	args := namedArgs{
		"tags":   p.Tags,
		"limit":  p.Limit,
		"now":    timeArg(p.Now),
		"worker": p.Worker,
		// An offer needs the listener that hears the dispatches: without
		// it (down, reconnecting) the worker claims as before.
		"offer_ms": offerMillis(p.Offer, e.d.dispatching()),
		"capacity": max(p.Capacity, 1),
	}
	if e.tx != nil {
		rows, err := e.q.Query(ctx, qClaim, args)
		if err != nil {
			return nil, translate(err)
		}
		return collectClaimed(rows)
	}
	batch := &pgx.Batch{}
	batch.Queue(genericPlan)
	batch.Queue(qClaim, args)
	results := e.q.SendBatch(ctx, batch)
	defer results.Close()
	if _, err := results.Exec(); err != nil {
		return nil, translate(err)
	}
	rows, err := results.Query()
	if err != nil {
		return nil, translate(err)
	}
	jobs, err := collectClaimed(rows)
	if err != nil {
		return nil, err
	}
	// Close reads the batch's end: the commit of its implicit transaction.
	if err := results.Close(); err != nil {
		return nil, translate(err)
	}
	return jobs, nil
}

// genericPlan makes the rest of a batch's implicit transaction use the
// statements' generic plans (see Claim).
const genericPlan = "SET LOCAL plan_cache_mode = force_generic_plan"

func collectClaimed(rows pgx.Rows) ([]spine.ClaimedJob, error) {
	jobs, err := pgx.CollectRows(rows, scanClaimed)
	if err != nil {
		return nil, translate(err)
	}
	return jobs, nil
}

// scanClaimed reads one row of claim.sql.
func scanClaimed(row pgx.CollectableRow) (spine.ClaimedJob, error) {
	var c claimedCols
	j := &c.job
	err := row.Scan(&j.ID, &j.Workspace, &c.trigger, &j.TriggerRef, &j.CreatedBy, &j.CreatedAt, &c.input,
		&j.Pin.GitSourceID, &j.Pin.CommitSHA, &j.Pin.AppKey, &j.Pin.ActionKey, &j.Pin.Entrypoint, &j.Pin.Runtime,
		&c.inSchema, &c.outSchema, &c.timeoutMS, &j.Pin.Tag,
		&c.maxAttempts, &c.backoffMS, &c.factor,
		&c.limits.memory, &c.limits.pids, &c.limits.cpu, &c.pinned.env, &c.pinned.warm,
		&j.Priority, &j.ClaimToken, &j.Attempt, &j.Restarts, &j.StartedAt, &j.Generation)
	if err != nil {
		return c.job, err
	}
	return c.claimed()
}

// claimedCols are a claimed job's columns as claim.sql and
// read_dispatched.sql return them, and as a dispatch notification
// carries them (notifiedJob): the job with the columns it is built from.
type claimedCols struct {
	job                        spine.ClaimedJob
	trigger                    string
	input, inSchema, outSchema []byte
	timeoutMS, backoffMS       int64
	maxAttempts                int
	factor                     float64
	limits                     limitCols
	pinned                     pinCols
}

// claimed builds the job from its columns.
func (c *claimedCols) claimed() (spine.ClaimedJob, error) {
	j := c.job
	j.TriggerKind = spine.TriggerKind(c.trigger)
	j.Input = compactJSON(c.input)
	j.Pin.InputSchema = compactJSON(c.inSchema)
	j.Pin.OutputSchema = compactJSON(c.outSchema)
	j.Pin.Timeout = time.Duration(c.timeoutMS) * time.Millisecond
	j.Pin.Retry = retryPolicy(c.maxAttempts, c.backoffMS, c.factor)
	j.Pin.Limits = c.limits.limits()
	return j, c.pinned.apply(&j.Pin)
}

// Heartbeat renews every still-owned lease in one statement and returns
// them with their cancel mark (queries/heartbeat.sql): one round trip
// (driver.QueueExecutor).
func (e *executor) Heartbeat(ctx context.Context, p spine.HeartbeatParams) ([]spine.HeartbeatResult, error) {
	ids := make([]uuid.UUID, len(p.Leases))
	tokens := make([]uuid.UUID, len(p.Leases))
	for i, l := range p.Leases {
		ids[i], tokens[i] = l.JobID, l.ClaimToken
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qHeartbeat, namedArgs{
		"job_ids":      ids,
		"claim_tokens": tokens,
		"now":          timeArg(p.Now),
	})
	if err != nil {
		return nil, translate(err)
	}
	owned, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (spine.HeartbeatResult, error) {
		var r spine.HeartbeatResult
		err := row.Scan(&r.JobID, &r.CancelRequested)
		return r, err
	})
	if err != nil {
		return nil, translate(err)
	}
	return owned, nil
}
