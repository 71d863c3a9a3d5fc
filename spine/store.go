package spine

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Store is the queue spine on one database. Each method is one transaction
// (or one statement) and states the invariant it keeps. The store core
// (package store) implements it once over a driver per database;
// spine/storetest checks it on each.
type Store interface {
	// Migrate applies the embedded, numbered migrations that are not yet
	// applied. It refuses a migration set with gaps.
	Migrate(ctx context.Context) error

	// Enqueue inserts job and job_queue in one transaction and wakes the
	// workers serving the job's tag (invariant 1). With a CoalesceKey it keeps
	// one waiting job per (workspace, app, action, key): the latest input
	// wins and the generation is bumped (invariant 10).
	Enqueue(ctx context.Context, p EnqueueParams) (EnqueueResult, error)

	// EnqueueBatch enqueues many jobs in one transaction with one wake-up per
	// tag; either all are enqueued or none.
	EnqueueBatch(ctx context.Context, ps []EnqueueParams) ([]EnqueueResult, error)

	// Sync makes every enqueue that returned before it durable, the
	// Unsynced ones too (EnqueueParams.Unsynced): call it before telling
	// anyone of such a job other than by its outcome.
	Sync(ctx context.Context) error

	// Claim takes up to p.Limit waiting jobs on p.Tags in one statement
	// (invariant 2): highest priority first, then oldest scheduled_for. Each
	// claimed job gets a fresh claim token and its first ping atomically, so
	// a worker that dies before its first heartbeat is still reaped. Never
	// returns more than p.Limit jobs; never the same job to two callers.
	Claim(ctx context.Context, p ClaimParams) ([]ClaimedJob, error)

	// SubscribeDispatch gives worker the inbox of the jobs enqueues
	// dispatch to it (ClaimParams.Offer, dispatch.go) until the returned
	// function ends it. A store without dispatch returns an inbox that
	// never fills.
	SubscribeDispatch(worker string) (*Inbox, func())

	// ReadDispatched reads a job dispatched to worker under lease l, as
	// Claim would have returned it. ErrNotOwner when l is no longer a
	// running job of worker's (canceled while waiting, reaped, finished).
	ReadDispatched(ctx context.Context, worker string, l Lease) (ClaimedJob, error)

	// Withdraw ends worker's offer, so no enqueue dispatches to it any
	// more. Owned, called after it returns, sees every dispatch to worker.
	Withdraw(ctx context.Context, worker string) error

	// Owned returns the leases of every running job the database says
	// worker owns: a worker whose inbox missed dispatches adopts those it
	// never heard of, and a stopping worker releases them.
	Owned(ctx context.Context, worker string) ([]Lease, error)

	// Heartbeat renews the ping of every lease whose claim token still
	// matches, in one statement, and returns those leases with their cancel
	// mark (invariant 3). A lease missing from the result is lost. A lease
	// named twice is renewed and returned once.
	Heartbeat(ctx context.Context, p HeartbeatParams) ([]HeartbeatResult, error)

	// Complete finishes an owned job in one transaction: the fenced delete
	// from job_queue, the job_completed row, the job_runtime delete
	// (invariant 5). A job marked canceled completes as canceled (invariant
	// 6). ErrNotOwner when the token no longer matches; nothing is written.
	Complete(ctx context.Context, p CompleteParams) (Status, error)

	// CompleteBatch completes many owned jobs at once (one statement on
	// Postgres, one transaction on SQLite), each exactly as Complete would:
	// fenced on its own claim token and all-or-nothing per job. A lease that
	// is lost (or a result that is refused) does not block the others: its
	// outcome carries ErrNotOwner (or ErrInvalid) and nothing is written for
	// it. Outcomes come in the order of ps. The error is for the batch as a
	// whole (the database failed): then nothing at all was written.
	CompleteBatch(ctx context.Context, ps []CompleteParams) ([]CompleteOutcome, error)

	// Fail records a failed attempt of an owned job, fenced like Complete.
	// With attempts left the job goes back to waiting with attempt+1 and
	// scheduled_for = now + backoff (exponential with jitter); otherwise it
	// finishes as failure. A canceled mark wins over a retry.
	Fail(ctx context.Context, p FailParams) (FailOutcome, error)

	// FailBatch records many failed attempts in one transaction (one
	// commit), each exactly as Fail would and fenced on its own claim
	// token. A lost lease or an error that cannot be stored gets its Err in
	// its outcome and does not hold back the others.
	FailBatch(ctx context.Context, ps []FailParams) ([]FailBatchOutcome, error)

	// Release gives an owned job back to the queue without charging an
	// attempt or a restart (a worker draining on shutdown). A job marked
	// canceled is finished canceled instead.
	Release(ctx context.Context, p ReleaseParams) error

	// Cancel finishes a waiting job as canceled at once, or marks a running
	// one for its worker to stop (invariant 6). ErrConflict for a finished
	// job, ErrNotFound for an unknown one. Audited.
	Cancel(ctx context.Context, p CancelParams) (CancelOutcome, error)

	// Reap handles running jobs whose ping is older than the zombie timeout
	// (invariant 4): canceled ones finish canceled; the others go back to
	// waiting with restarts+1 while restarts+1 <= RestartLimit, else finish
	// as failure with a reason. Every write repeats the full guard, so a job
	// that completed or heartbeated meanwhile is left alone; concurrent
	// reapers never handle one job twice.
	Reap(ctx context.Context, p ReapParams) (ReapResult, error)

	// Reopen puts a failed job (or, with Force, a canceled one) back in the
	// queue with the same id and pin, failure info cleared, and audits it
	// (invariant 7). ErrConflict from any other state.
	Reopen(ctx context.Context, p ReopenParams) error

	// Sweep deletes finished jobs (job_completed, job, job_logs, job_audit)
	// completed before p.Before, in batches of p.BatchSize, and returns how
	// many jobs it deleted. Queued and running jobs are never touched
	// (invariant 8).
	Sweep(ctx context.Context, p SweepParams) (int, error)

	// Health reads the queue_health view.
	Health(ctx context.Context) ([]TagHealth, error)

	// SetZombieTimeout records the zombie timeout the queue_health view uses
	// to count expired heartbeats.
	SetZombieTimeout(ctx context.Context, d time.Duration) error

	// GetJob returns a job in any state. ErrNotFound when it is not in
	// that workspace.
	GetJob(ctx context.Context, workspace string, id uuid.UUID) (Job, error)

	// AppendLog appends a chunk to an owned job's logs. ErrNotOwner when the
	// token no longer matches.
	AppendLog(ctx context.Context, p AppendLogParams) error

	// Logs returns a job's chunks with Seq > afterSeq, in order.
	Logs(ctx context.Context, jobID uuid.UUID, afterSeq int64) ([]LogChunk, error)

	// Audit returns a job's audit trail, oldest first.
	Audit(ctx context.Context, jobID uuid.UUID) ([]AuditEntry, error)

	// Subscribe returns a channel that receives a value soon after a job is
	// enqueued (or reopened, retried, released) on one of tags, and a
	// function that ends the subscription. Wake-ups are hints: a worker
	// still polls as the fallback.
	Subscribe(tags []string) (<-chan struct{}, func())

	// SubscribeCompletion returns a channel that receives a value soon
	// after job id becomes terminal (success, failure or canceled, by any
	// path: Complete, CompleteBatch, a last Fail or FailBatch, Release or
	// Cancel of a waiting job, the reaper), and a function that ends the
	// subscription. Every transaction that writes job_completed sends the
	// wake-up, delivered only once it has committed (Postgres: NOTIFY, so
	// waiters on every server hear it; SQLite: in process after the
	// commit), so a reader woken by it sees the job finished. A completion
	// committed after SubscribeCompletion returns is never missed: a
	// waiter subscribes first and reads the job's status second. Wake-ups
	// are hints (a lost listener connection wakes every waiter when it is
	// back): a waiter re-reads the job and keeps a slow poll as the
	// fallback. uuid.Nil subscribes to the completion of every job (the
	// live events stream). A wake-up may carry a success's outcome
	// (Finished): the job then reads as that outcome, and a waiter may
	// answer with it without reading the job.
	SubscribeCompletion(id uuid.UUID) (<-chan Finished, func())

	// Close releases connections and stops the listener.
	Close()
}
