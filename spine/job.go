package spine

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// TriggerKind says which trigger enqueued a job. Every trigger goes through
// the same Enqueue; the kind is recorded for the operator.
type TriggerKind string

// The closed set of trigger kinds (DESIGN §2).
const (
	TriggerAPI      TriggerKind = "api"
	TriggerCLI      TriggerKind = "cli"
	TriggerManual   TriggerKind = "manual"
	TriggerWebhook  TriggerKind = "webhook"
	TriggerSchedule TriggerKind = "schedule"
	TriggerSeed     TriggerKind = "seed"
	TriggerChild    TriggerKind = "child"
)

// Valid reports whether k is one of the known trigger kinds.
func (k TriggerKind) Valid() bool {
	switch k {
	case TriggerAPI, TriggerCLI, TriggerManual, TriggerWebhook, TriggerSchedule, TriggerSeed, TriggerChild:
		return true
	}
	return false
}

// Status is a job's status as the API reports it.
type Status string

// Queued and running live in job_queue; the other three are terminal and
// live in job_completed.
const (
	StatusQueued   Status = "queued"
	StatusRunning  Status = "running"
	StatusSuccess  Status = "success"
	StatusFailure  Status = "failure"
	StatusCanceled Status = "canceled"
)

// Terminal reports whether s is a finished status.
func (s Status) Terminal() bool {
	return s == StatusSuccess || s == StatusFailure || s == StatusCanceled
}

// RetryPolicy says how a failed attempt is retried. MaxAttempts counts all
// attempts, the first included: 1 means no retry.
type RetryPolicy struct {
	MaxAttempts int           `json:"max_attempts"`
	Backoff     time.Duration `json:"backoff"`
	Factor      float64       `json:"factor"`
}

// DefaultRetry is the policy of DESIGN §2: one attempt, base 5 s, factor 5.
var DefaultRetry = RetryPolicy{MaxAttempts: 1, Backoff: 5 * time.Second, Factor: 5}

// Pin is the execution metadata copied into a job at enqueue. A queued job
// runs exactly what its pin names, whatever is deployed later.
type Pin struct {
	GitSourceID  string          `json:"git_source_id"`
	CommitSHA    string          `json:"commit_sha"`
	AppKey       string          `json:"app"`
	ActionKey    string          `json:"action"`
	Entrypoint   string          `json:"entrypoint"`
	Runtime      string          `json:"runtime"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Timeout      time.Duration   `json:"timeout"`
	Tag          string          `json:"tag"`
	Retry        RetryPolicy     `json:"retry"`
	// Limits are the job's resource limits from the manifest (app, then
	// action overrides); the worker caps them by its own (DESIGN §6).
	Limits Limits `json:"limits"`
	// Env is the job's environment from the manifest (`env:` of the app,
	// the action's merged over it), sorted by name: literals from git and
	// references to workspace secrets, which the worker resolves at claim
	// (DESIGN §8). The pin holds names and references, never a secret's
	// value.
	Env []EnvVar `json:"env,omitempty"`
	// Warm is the job's warm-runtime policy (manifest `warm:`, DESIGN §7);
	// nil runs the job in a fresh process.
	Warm *Warm `json:"warm,omitempty"`
}

// EnvVar is one variable of a job's pinned environment: a literal Value, or
// Secret naming the workspace secret whose value the worker sets at claim.
// Exactly one of the two is set.
type EnvVar struct {
	Name   string `json:"name"`
	Value  string `json:"value,omitempty"`
	Secret string `json:"secret,omitempty"`
}

// Warm is the manifest's `warm:` policy: a long-lived runtime process
// serves up to MaxJobs jobs one at a time and is recycled after Idle
// without work. `warm: true` is DefaultWarm.
type Warm struct {
	MaxJobs int           `json:"max_jobs"`
	Idle    time.Duration `json:"idle"`
}

// DefaultWarm is `warm: true` (DESIGN §7): 1000 jobs, 5 minutes idle.
var DefaultWarm = Warm{MaxJobs: 1000, Idle: 5 * time.Minute}

// Limits are a job's resource limits (manifest `limits:`, DESIGN §6). A
// zero field means "not set": the worker's default applies. The worker
// caps each field by its own maximum whatever the manifest asks.
type Limits struct {
	// Memory is the job's memory limit in bytes.
	Memory int64 `json:"memory,omitempty"`
	// Pids bounds the job's processes and threads together.
	Pids int `json:"pids,omitempty"`
	// CPU is the job's share in cores (1.5 = one and a half CPUs).
	CPU float64 `json:"cpu,omitempty"`
}

// Columns gives the limits as the stores' three nullable columns
// (limit_memory, limit_pids, limit_cpu): nil (NULL) for a field not set.
func (l Limits) Columns() (memory, pids, cpu any) {
	if l.Memory > 0 {
		memory = l.Memory
	}
	if l.Pids > 0 {
		pids = l.Pids
	}
	if l.CPU > 0 {
		cpu = l.CPU
	}
	return memory, pids, cpu
}

// EnqueueParams is one job to enqueue. The caller (the catalog resolver in
// the product, a test or a library user here) fills the pin.
type EnqueueParams struct {
	// ID is optional; a new UUIDv7 is generated when it is zero.
	ID          uuid.UUID
	Workspace   string
	TriggerKind TriggerKind
	TriggerRef  string
	CreatedBy   string
	Input       json.RawMessage
	Pin         Pin
	// Priority: higher runs first.
	Priority int
	// ScheduledFor: zero means now.
	ScheduledFor time.Time
	// CoalesceKey, when set, keeps at most one waiting job per
	// (workspace, app, action, key): a second enqueue replaces the waiting
	// job's input and bumps its generation instead of adding a row.
	CoalesceKey string
	// Now is the enqueue time; zero means the store's clock.
	Now time.Time
	// Unsynced lets the job's commit return before it is flushed to disk
	// (Postgres: synchronous_commit off for its insert alone; SQLite: a
	// commit without a sync, as a claim's). It is for a caller that tells
	// no one of the job before a later synced commit covers it or it calls
	// Store.Sync: a ?wait answers with the outcome, whose synced commit
	// flushes the enqueue too (WAL order), and so does the claim (on
	// SQLite the completion) before anyone learns of the job. A crash of
	// the database's machine before either loses a job nobody was told
	// of. Only a job without a coalesce key outside a caller's transaction.
	Unsynced bool
	// AtCommit inserts the job only while its app is still at the pin's
	// source and commit, and otherwise refuses it with ErrStalePin: the pin
	// was resolved from catalog rows read earlier (the store core keeps
	// them), and a sync since may have moved the app. Only a job without a
	// coalesce key.
	AtCommit bool
}

// EnqueueResult says which job holds the request.
type EnqueueResult struct {
	ID uuid.UUID
	// Coalesced is true when the request was folded into a waiting job.
	Coalesced bool
	// Generation counts how many requests the waiting job holds (1 for a
	// fresh job).
	Generation int64
}

// ClaimParams asks for up to Limit waiting jobs on any of Tags.
type ClaimParams struct {
	Worker string
	Tags   []string
	Limit  int
	Now    time.Time
	// Offer, when positive, lets a claim that got fewer than Limit jobs
	// leave an offer in the same statement: until Offer has passed (the
	// worker renews it with every claim that finds the queue short), an
	// enqueue may hand a due job on one of Tags straight to Worker
	// (dispatch at enqueue, docs/QUEUE.md). Capacity is the worker's
	// concurrency: no dispatch makes it own more running jobs than that.
	// A store without dispatch ignores both.
	Offer    time.Duration
	Capacity int
}

// ClaimedJob is a job a worker now owns. Its ClaimToken fences every later
// write the worker makes for it.
type ClaimedJob struct {
	ID          uuid.UUID
	Workspace   string
	TriggerKind TriggerKind
	TriggerRef  string
	CreatedBy   string
	Input       json.RawMessage
	Pin         Pin
	Priority    int
	ClaimToken  uuid.UUID
	Attempt     int
	Restarts    int
	CreatedAt   time.Time
	StartedAt   time.Time
	Generation  int64
	// LogTail is output the handler has not appended to the job's logs
	// when it returns; it sets it last, and the worker writes it in the
	// same transaction as the outcome (complete, fail or release), so the
	// job's status and the end of its logs land together or not at all.
	LogTail string
}

// Lease identifies one claim: a job and the token its owner got.
type Lease struct {
	JobID      uuid.UUID
	ClaimToken uuid.UUID
}

// HeartbeatParams renews the pings of every job one worker runs.
type HeartbeatParams struct {
	Leases []Lease
	Now    time.Time
}

// HeartbeatResult reports one lease that is still owned. A lease missing
// from the results is lost: its worker must kill the job and not complete.
type HeartbeatResult struct {
	JobID uuid.UUID
	// CancelRequested is the cancel mark: the worker must stop the job and
	// complete it canceled.
	CancelRequested bool
}

// CompleteParams finishes a job its caller owns with success.
type CompleteParams struct {
	Lease
	Result json.RawMessage
	// LogTail is the last chunk of the job's logs, appended in the
	// completion's transaction; empty adds no statement.
	LogTail string
	Now     time.Time
}

// CompleteOutcome is what CompleteBatch did for one job.
type CompleteOutcome struct {
	JobID uuid.UUID
	// Status is success, or canceled for a job that carried the cancel
	// mark; empty when Err is set.
	Status Status
	// Err is nil when the job was completed; it wraps ErrNotOwner when the
	// lease was lost and ErrInvalid when the result was refused. Nothing was
	// written for a job whose Err is set.
	Err error
}

// JobError is a failed attempt's error as stored and shown.
type JobError struct {
	Message string `json:"message"`
	Stack   string `json:"stack,omitempty"`
	Kind    string `json:"kind,omitempty"`
}

// FailParams records a failed attempt of a job its caller owns.
type FailParams struct {
	Lease
	Error JobError
	// LogTail is the last chunk of the attempt's logs, appended in the
	// failure's transaction; empty adds no statement.
	LogTail string
	// Now is the failure time; retries are scheduled from it.
	Now time.Time
}

// FailOutcome says what a failure did.
type FailOutcome struct {
	// Retried is true when the job went back to waiting for another attempt.
	Retried bool
	// Status is the terminal status when not retried (failure, or canceled
	// when the job was marked canceled).
	Status Status
	// NextAttempt and ScheduledFor describe the retry.
	NextAttempt  int
	ScheduledFor time.Time
}

// FailBatchOutcome is what FailBatch did with one failure.
type FailBatchOutcome struct {
	JobID uuid.UUID
	FailOutcome
	// Err is nil when the failure was recorded; it wraps ErrNotOwner when
	// the lease was lost and ErrInvalid when the error could not be stored.
	// Nothing was written for a job whose Err is set.
	Err error
}

// ReleaseParams gives a job back to the queue without charging an attempt
// (a worker shutting down).
type ReleaseParams struct {
	Lease
	// LogTail is the last chunk of the attempt's logs, appended in the
	// release's transaction; empty adds no statement.
	LogTail string
	Now     time.Time
}

// CancelParams asks to cancel a job.
type CancelParams struct {
	Workspace string
	JobID     uuid.UUID
	By        string
	Reason    string
	Now       time.Time
}

// CancelOutcome says what a cancel did.
type CancelOutcome struct {
	// Status is canceled when the job was waiting (terminal at once) and
	// running when the job was only marked for its worker to stop.
	Status Status
}

// ReapParams drives one reaper pass.
type ReapParams struct {
	Now           time.Time
	ZombieTimeout time.Duration
	RestartLimit  int
	// Limit bounds the rows handled in one pass.
	Limit int
}

// ReapResult lists what a reaper pass did.
type ReapResult struct {
	Requeued []uuid.UUID
	Failed   []uuid.UUID
	Canceled []uuid.UUID
}

// ReopenParams asks to run a finished job again (operator only).
type ReopenParams struct {
	Workspace string
	JobID     uuid.UUID
	By        string
	Reason    string
	// Force allows reopening a canceled job.
	Force bool
	Now   time.Time
}

// SweepParams drives one retention pass.
type SweepParams struct {
	// Before: finished jobs completed before this time are deleted.
	Before time.Time
	// BatchSize bounds each delete statement.
	BatchSize int
}

// Job is the full view of a job, waiting, running or finished.
type Job struct {
	ID             uuid.UUID
	Workspace      string
	Status         Status
	TriggerKind    TriggerKind
	TriggerRef     string
	CreatedBy      string
	CreatedAt      time.Time
	Input          json.RawMessage
	Pin            Pin
	CoalesceKey    string
	Priority       int
	ScheduledFor   time.Time
	StartedAt      *time.Time
	CompletedAt    *time.Time
	Worker         string
	Attempt        int
	Restarts       int
	Generation     int64
	Ping           *time.Time
	Result         json.RawMessage
	Error          *JobError
	LastError      *JobError
	CanceledBy     string
	CanceledReason string
	// SupersededBy is the newest job of the same (workspace, app, action,
	// coalesce key) created after this one; the zero UUID when there is
	// none or the job has no coalesce key. A job reads it before writing
	// its side effects and discards its result when it is set.
	SupersededBy uuid.UUID
	// Secrets are the workspace secrets the job's last attempt received
	// at claim, as "name@version" (DESIGN §8); never a value.
	Secrets []string
}

// LogChunk is one ordered piece of a job's output.
type LogChunk struct {
	JobID     uuid.UUID
	Seq       int64
	Data      string
	CreatedAt time.Time
}

// AppendLogParams appends output of a job its caller owns.
type AppendLogParams struct {
	Lease
	Data string
	Now  time.Time
}

// TagHealth is one row of the queue_health view: the figures an operator
// watches, per workspace and tag.
type TagHealth struct {
	Workspace         string
	Tag               string
	Waiting           int64
	Scheduled         int64
	Running           int64
	Failed24h         int64
	ExpiredHeartbeats int64
	OldestWaitingAge  time.Duration
	MaxAttempt        int64
	MaxRestarts       int64
}

// AuditEntry is one row of job_audit: who reopened or canceled what.
type AuditEntry struct {
	JobID  uuid.UUID
	Action string
	By     string
	Reason string
	At     time.Time
}
