package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// Dispatch at enqueue (spine/dispatch.go, migration 0022): the claim
// leaves the offer (claim.sql), the enqueue takes it (enqueue.sql), the
// listener routes the notification (listen.go), and what is here decodes
// the job a notification carries, reads one it could not carry, and
// ends the offer.

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

// notifiedJob is the job line of a dispatch notification (enqueue.sql):
// the job row as stored, its queue generation and start, and its schema
// bodies, the columns read_dispatched.sql returns for it.
type notifiedJob struct {
	Job struct {
		Workspace     string          `json:"workspace"`
		TriggerKind   string          `json:"trigger_kind"`
		TriggerRef    string          `json:"trigger_ref"`
		CreatedBy     string          `json:"created_by"`
		CreatedAt     time.Time       `json:"created_at"`
		Input         json.RawMessage `json:"input"`
		GitSourceID   string          `json:"git_source_id"`
		CommitSHA     string          `json:"commit_sha"`
		AppKey        string          `json:"app_key"`
		ActionKey     string          `json:"action_key"`
		Entrypoint    string          `json:"entrypoint"`
		Runtime       string          `json:"runtime"`
		TimeoutMS     int64           `json:"timeout_ms"`
		Tag           string          `json:"tag"`
		Priority      int             `json:"priority"`
		MaxAttempts   int             `json:"max_attempts"`
		BackoffMS     int64           `json:"backoff_ms"`
		BackoffFactor float64         `json:"backoff_factor"`
		LimitMemory   *int64          `json:"limit_memory"`
		LimitPids     *int            `json:"limit_pids"`
		LimitCPU      *float64        `json:"limit_cpu"`
		Env           *string         `json:"env"`
		Warm          *string         `json:"warm"`
	} `json:"job"`
	Generation   int64           `json:"generation"`
	StartedAt    time.Time       `json:"started_at"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema"`
}

// decodeNotifiedJob builds the job a dispatch notification carries under
// lease l, as ReadDispatched would have read it: the same columns through
// the same conversions (claimedCols). A dispatched job is on its first
// attempt.
func decodeNotifiedJob(l spine.Lease, body string) (spine.ClaimedJob, error) {
	var n notifiedJob
	if err := json.Unmarshal([]byte(body), &n); err != nil {
		return spine.ClaimedJob{}, err
	}
	r := &n.Job
	c := claimedCols{
		job: spine.ClaimedJob{
			ID: l.JobID, Workspace: r.Workspace, TriggerRef: r.TriggerRef, CreatedBy: r.CreatedBy,
			CreatedAt: r.CreatedAt.UTC(), Priority: r.Priority, ClaimToken: l.ClaimToken, Attempt: 1,
			StartedAt: n.StartedAt.UTC(), Generation: n.Generation,
			Pin: spine.Pin{GitSourceID: r.GitSourceID, CommitSHA: r.CommitSHA, AppKey: r.AppKey, ActionKey: r.ActionKey,
				Entrypoint: r.Entrypoint, Runtime: r.Runtime, Tag: r.Tag},
		},
		trigger: r.TriggerKind, input: r.Input, inSchema: jsonOrNil(n.InputSchema), outSchema: jsonOrNil(n.OutputSchema),
		timeoutMS: r.TimeoutMS, backoffMS: r.BackoffMS, maxAttempts: r.MaxAttempts, factor: r.BackoffFactor,
		limits: limitCols{memory: r.LimitMemory, pids: r.LimitPids, cpu: r.LimitCPU},
		pinned: pinCols{env: r.Env, warm: r.Warm},
	}
	return c.claimed()
}

// jsonOrNil is v, or nil for JSON null (a NULL column).
func jsonOrNil(v json.RawMessage) []byte {
	if string(v) == "null" {
		return nil
	}
	return v
}

func scanLease(row pgx.CollectableRow) (spine.Lease, error) {
	var l spine.Lease
	err := row.Scan(&l.JobID, &l.ClaimToken)
	return l, err
}
