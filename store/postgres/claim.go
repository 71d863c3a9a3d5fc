package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// Claim takes up to p.Limit waiting jobs on p.Tags in one statement
// (invariant 2; see queries/claim.sql).
func (s *Driver) Claim(ctx context.Context, p spine.ClaimParams) ([]spine.ClaimedJob, error) {
	if p.Limit <= 0 {
		return nil, fmt.Errorf("claim jobs: %w: limit %d is not positive", spine.ErrInvalid, p.Limit)
	}
	tags := distinct(p.Tags)
	if len(tags) == 0 {
		return nil, fmt.Errorf("claim jobs: %w: no tags", spine.ErrInvalid)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qClaim, pgx.StrictNamedArgs{
		"tags":   tags,
		"limit":  p.Limit,
		"now":    timeArg(p.Now),
		"worker": p.Worker,
	})
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", translate(err))
	}
	jobs, err := pgx.CollectRows(rows, scanClaimed)
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", translate(err))
	}
	return jobs, nil
}

// scanClaimed reads one row of claim.sql.
func scanClaimed(row pgx.CollectableRow) (spine.ClaimedJob, error) {
	var (
		j                 spine.ClaimedJob
		trigger           string
		input, in, out    []byte
		timeoutMS, backMS int64
		maxAttempts       int
		factor            float64
		limits            limitCols
	)
	err := row.Scan(&j.ID, &j.Workspace, &trigger, &j.TriggerRef, &j.CreatedBy, &j.CreatedAt, &input,
		&j.Pin.GitSourceID, &j.Pin.CommitSHA, &j.Pin.AppKey, &j.Pin.ActionKey, &j.Pin.Entrypoint, &j.Pin.Runtime,
		&in, &out, &timeoutMS, &j.Pin.Tag,
		&maxAttempts, &backMS, &factor,
		&limits.memory, &limits.pids, &limits.cpu,
		&j.Priority, &j.ClaimToken, &j.Attempt, &j.Restarts, &j.StartedAt, &j.Generation)
	if err != nil {
		return j, err
	}
	j.TriggerKind = spine.TriggerKind(trigger)
	j.Input = compactJSON(input)
	j.Pin.InputSchema = compactJSON(in)
	j.Pin.OutputSchema = compactJSON(out)
	j.Pin.Timeout = time.Duration(timeoutMS) * time.Millisecond
	j.Pin.Retry = retryPolicy(maxAttempts, backMS, factor)
	j.Pin.Limits = limits.limits()
	return j, nil
}

// Heartbeat renews every still-owned lease in one statement and returns
// them with their cancel mark (invariant 3; see queries/heartbeat.sql).
func (s *Driver) Heartbeat(ctx context.Context, p spine.HeartbeatParams) ([]spine.HeartbeatResult, error) {
	if len(p.Leases) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, len(p.Leases))
	tokens := make([]uuid.UUID, len(p.Leases))
	for i, l := range p.Leases {
		ids[i], tokens[i] = l.JobID, l.ClaimToken
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qHeartbeat, pgx.StrictNamedArgs{
		"job_ids":      ids,
		"claim_tokens": tokens,
		"now":          timeArg(p.Now),
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat: %w", translate(err))
	}
	owned, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (spine.HeartbeatResult, error) {
		var r spine.HeartbeatResult
		err := row.Scan(&r.JobID, &r.CancelRequested)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("heartbeat: %w", translate(err))
	}
	return owned, nil
}

// distinct drops duplicate and empty tags, keeping the first order.
func distinct(tags []string) []string {
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
