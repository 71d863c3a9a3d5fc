package driver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// QueueExecutor claims, heartbeats, completes and fails jobs, and reads them
// back. These are the queue's hot path: each operation is one statement
// (on SQLite one short sequence on the writer) with no round trip of its
// own beyond it. The core checks every request first (limits, tags,
// results, job errors) and decides the fail and release rules between a
// lock operation and the write that follows it; the writes still repeat
// the claim-token fence, so a lost lease is spine.ErrNotOwner and writes
// nothing. A zero time is the database's clock (Postgres) or the
// driver's (SQLite), read when the statement runs.
type QueueExecutor interface {
	// Claim takes up to p.Limit waiting jobs due at p.Now on p.Tags in one
	// statement (queries/claim.sql, invariant 2), best first: each gets a
	// fresh claim token, p.Worker as owner and its first ping. p.Limit is
	// positive and p.Tags distinct and not empty (the core checks both).
	Claim(ctx context.Context, p spine.ClaimParams) ([]spine.ClaimedJob, error)

	// ReadDispatched reads the job of lease l, with what Claim returns for
	// it, while it is running and owned by worker
	// (spine.Store.ReadDispatched); spine.ErrNotOwner otherwise. It
	// writes nothing.
	ReadDispatched(ctx context.Context, worker string, l spine.Lease) (spine.ClaimedJob, error)

	// Withdraw deletes worker's offer, where the database keeps offers
	// (spine.Store.Withdraw).
	Withdraw(ctx context.Context, worker string) error

	// Owned reads the leases of the running jobs worker owns, in a
	// statement that sees every dispatch committed before it began
	// (spine.Store.Owned). It writes nothing.
	Owned(ctx context.Context, worker string) ([]spine.Lease, error)

	// Heartbeat renews the ping of every lease in p.Leases (not empty)
	// still owned, in one statement (queries/heartbeat.sql, invariant 3),
	// and returns those leases with their cancel mark, a lease named twice
	// once.
	Heartbeat(ctx context.Context, p spine.HeartbeatParams) ([]spine.HeartbeatResult, error)

	// Complete finishes an owned job in one statement (queries/complete.sql,
	// invariant 5): the fenced delete of its queue row, its job_completed
	// row with c's status (canceled instead when the job carries the cancel
	// mark, invariant 6), result and error, and the delete of its runtime
	// row. It wakes the job's completion waiters on commit and returns the
	// status written; spine.ErrNotOwner, and nothing written, when the lease
	// is lost.
	Complete(ctx context.Context, c Completion) (spine.Status, error)

	// CompleteBatch completes every job of cs with success (canceled when
	// marked), each exactly as Complete would and fenced on its own claim
	// token, in one statement (queries/complete_batch.sql; SQLite: one
	// write transaction), and wakes their waiters on commit. cs repeats no
	// lease. A cs[i] with a LogTail gets it appended as its job's next log
	// chunk in the same statement (transaction), only if it is completed.
	// statuses[i] is the status written for cs[i], empty when its lease
	// was lost (nothing was written for it).
	CompleteBatch(ctx context.Context, cs []spine.CompleteParams) (statuses []spine.Status, err error)

	// LockLease locks an owned job's queue row for the rest of the
	// transaction (queries/lock_lease.sql; on SQLite the one writer is the
	// lock) and reads what Fail and Release decide on. spine.ErrNotOwner
	// when the lease is lost. Run it in a transaction with the write that
	// follows.
	LockLease(ctx context.Context, l spine.Lease, now time.Time) (LeaseState, error)

	// LockLeases is LockLease for many leases in one statement
	// (queries/lock_leases.sql), in job_id order; a lost lease is missing
	// from the map.
	LockLeases(ctx context.Context, ls []LeaseAt) (map[spine.Lease]LeaseState, error)

	// Requeue puts an owned job that carries no cancel mark back to
	// waiting (queries/requeue.sql): the failed attempt of Fail or the
	// give-back of Release, fenced on the claim token. Its runtime row
	// goes, and its tag is woken on commit. spine.ErrNotOwner when the
	// lease is lost or the job is marked. The caller holds the LockLease.
	Requeue(ctx context.Context, r Requeue) error

	// WriteFailures writes the decided outcomes of a FailBatch whose
	// leases the caller holds (LockLeases, same transaction): a Retry
	// entry as Requeue would with attempt+1, the others as Complete would
	// with failure (canceled when marked). On Postgres it is one pipelined
	// batch, with one completion wake-up for all. statuses[i] is the
	// status written for a finished fs[i], empty for a retried one. A row
	// that no longer matches its lease fails the whole call.
	WriteFailures(ctx context.Context, fs []Failure) (statuses []spine.Status, err error)

	// AppendLog appends p.Data (text a column stores: the core passes it
	// through spine.SafeText) to an owned job's logs in one fenced
	// statement (queries/append_log.sql), numbered after its last chunk.
	// spine.ErrNotOwner when the lease is lost. The core also runs it in
	// an outcome's transaction, before the outcome, for the job's log
	// tail: until that transaction ends the lease must stay held (Postgres
	// locks the queue row; SQLite's writer is the lock).
	AppendLog(ctx context.Context, p spine.AppendLogParams) error

	// GetJob reads a job of workspace in any state, in one statement
	// (queries/get_job.sql). spine.ErrNotFound when the workspace has no
	// such job; a job row with neither a queue nor a completion row comes
	// back with the empty status.
	GetJob(ctx context.Context, workspace string, id uuid.UUID) (spine.Job, error)

	// Logs reads a job's chunks with Seq > afterSeq, in order
	// (queries/logs.sql).
	Logs(ctx context.Context, jobID uuid.UUID, afterSeq int64) ([]spine.LogChunk, error)

	// Audit reads a job's audit trail, oldest first (queries/audit.sql).
	Audit(ctx context.Context, jobID uuid.UUID) ([]spine.AuditEntry, error)

	// ListJobs reads one page of a workspace's jobs, newest first, in the
	// view of GetJob (queries/list_jobs.sql). p is checked and p.After is
	// set (the first page starts after every job, so the cursor is always
	// an index condition).
	ListJobs(ctx context.Context, p spine.ListJobsParams) ([]spine.Job, error)

	// CountJobs counts a workspace's jobs per status
	// (queries/count_jobs.sql); a status with no job may be missing.
	CountJobs(ctx context.Context, workspace string) (map[spine.Status]int64, error)
}

// Completion is one terminal completion by a job's owner.
type Completion struct {
	spine.Lease
	// Status is the status wanted: success or failure by the owner,
	// canceled by a release of a marked job. A cancel mark wins.
	Status spine.Status
	// Result is a checked result (spine.CheckResult), nil for none.
	Result json.RawMessage
	// Error is an encoded job error (spine.JobError.Encode), empty for
	// none.
	Error string
	// Now is the completion time; zero means the database's clock.
	Now time.Time
}

// LeaseState is what LockLease read under the lock of an owned job.
type LeaseState struct {
	// Attempt is the attempt the lease is running.
	Attempt int
	// Canceled is the cancel mark.
	Canceled bool
	// Retry is the pinned retry policy.
	Retry spine.RetryPolicy
	// Now is the time the caller decides with: its own, or the clock when
	// it passed none.
	Now time.Time
}

// LeaseAt is one lease of LockLeases with its caller's time.
type LeaseAt struct {
	spine.Lease
	// Now is the caller's time for this lease; zero means the database's
	// clock.
	Now time.Time
}

// Requeue is the give-back of an owned job.
type Requeue struct {
	spine.Lease
	// AttemptStep is added to the attempt: 1 for a failed attempt, 0 for a
	// release.
	AttemptStep int
	// LastError is the encoded job error to keep as last_error; empty
	// keeps the one stored.
	LastError string
	// ScheduledFor is when the job is due again.
	ScheduledFor time.Time
}

// Failure is the decided outcome of one failed attempt of a FailBatch.
type Failure struct {
	spine.Lease
	// Retry sends the job back to waiting for attempt+1 at At; otherwise
	// it finishes as failure at At.
	Retry bool
	At    time.Time
	// Error is the encoded job error.
	Error string
}
