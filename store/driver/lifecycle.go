package driver

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// LifecycleExecutor cancels, reopens, reaps and sweeps jobs and reads the
// queue's health. The core decides (spine.CancelRule, spine.ReopenRule,
// spine.ReapRule) between a lock op and the writes that follow it, all in
// one transaction; the writes still repeat their guard, so a write never
// acts on a read alone.
type LifecycleExecutor interface {
	// CancelLock locks a live job of the workspace for a cancel and returns
	// its status: queued or running, the terminal status of a finished job
	// (read, not locked: a finished job never changes again), or "" when
	// the workspace has no such job. On Postgres the job_queue row is
	// locked FOR UPDATE; on SQLite the one writer is the lock.
	CancelLock(ctx context.Context, workspace string, id uuid.UUID) (spine.Status, error)
	// CancelWaiting finishes the waiting job p.JobID as canceled at once
	// (invariant 6), with no start time, audits the cancel and wakes the
	// job's completion waiters on commit. The caller holds the CancelLock
	// of the job in the same transaction.
	CancelWaiting(ctx context.Context, p spine.CancelParams) error
	// CancelMark marks the running job p.JobID for its worker, who sees
	// the mark on its next heartbeat, keeping a first mark, and audits
	// the cancel. The job stays live: nothing is woken.
	CancelMark(ctx context.Context, p spine.CancelParams) error

	// ReopenLock locks a finished job of the workspace for a reopen and
	// returns its status: its terminal status, queued or running for a
	// live job (read, not locked), or "" when the workspace has no such
	// job.
	ReopenLock(ctx context.Context, workspace string, id uuid.UUID) (spine.Status, error)
	// Reopen puts the finished job p.JobID back in the queue with the same
	// id and pin (invariant 7): attempt 1, restarts 0, failure info
	// cleared; audits the reopen and wakes the job's tag on commit. The
	// caller holds the ReopenLock of the job in the same transaction.
	// spine.ErrNotFound when the job's pinned record is missing.
	Reopen(ctx context.Context, p spine.ReopenParams) error

	// ReapLock reads (on Postgres: locks, SKIP LOCKED) up to p.Limit
	// running jobs whose ping is missing or older than p.ZombieTimeout at
	// p.Now (invariant 4), with what spine.ReapRule decides from. A job
	// another reaper holds is left to the next pass, so concurrent reapers
	// never handle one job twice (on SQLite the one writer serializes
	// them). What it read may be stale by the time the writes run: they
	// repeat the guard.
	ReapLock(ctx context.Context, p ReapLockParams) ([]Zombie, error)
	// ReapRequeue sends the jobs of b back to waiting with restarts+1, the
	// attempt not charged, each storing its Errors entry as last_error,
	// and wakes their tags on commit. Each write repeats the whole guard
	// (running, the claim token read, no cancel mark, restarts+1 <=
	// b.RestartLimit, ping still stale at b.Now), so a job that completed,
	// heartbeated or was claimed again meanwhile is left alone
	// (river#1302). It returns the jobs it requeued.
	ReapRequeue(ctx context.Context, b ReapBatch) ([]uuid.UUID, error)
	// ReapFinish completes the jobs of b that must not run again: a
	// cancel-marked job canceled (its Errors entry ignored), one past
	// b.RestartLimit as failure with its Errors entry as the job error,
	// behind the same guard as ReapRequeue (the mark re-read by the write
	// itself). The finished jobs' waiters are woken on commit. It returns
	// the jobs it failed and those it canceled.
	ReapFinish(ctx context.Context, b ReapBatch) (failed, canceled []uuid.UUID, err error)

	// Sweep deletes up to limit finished jobs completed before before, the
	// oldest first, with their job, job_logs and job_audit rows, and says
	// how many it deleted (invariant 8). Only job_completed picks the
	// jobs: a queued or running job is never touched. On the pool it is
	// one short transaction of its own.
	Sweep(ctx context.Context, before time.Time, limit int) (int, error)
	// SweepSchemas deletes the pinned schemas (job_schema) no job can
	// reference any more.
	SweepSchemas(ctx context.Context) error

	// Health reads the queue_health view, one row per workspace and tag.
	Health(ctx context.Context) ([]spine.TagHealth, error)
	// SetZombieTimeout records the zombie timeout the queue_health view
	// counts expired heartbeats with; d is positive.
	SetZombieTimeout(ctx context.Context, d time.Duration) error
}

// ReapLockParams selects one reaper pass's stale jobs.
type ReapLockParams struct {
	// Now is the reaper's clock; zero means the database's.
	Now           time.Time
	ZombieTimeout time.Duration
	Limit         int
}

// Zombie is a stale running job as ReapLock read it: its lease (the claim
// token every reaper write checks again) and what spine.ReapRule decides
// from.
type Zombie struct {
	spine.Lease
	spine.Zombie
}

// ReapBatch is one reaper write: the jobs as column arrays of one length
// (the job, the claim token ReapLock read, the encoded job error to
// store, JSON null where none is stored), and the guard the write
// repeats.
type ReapBatch struct {
	JobIDs      []uuid.UUID
	ClaimTokens []uuid.UUID
	Errors      []string

	// Now is the reaper's clock; zero means the database's.
	Now           time.Time
	ZombieTimeout time.Duration
	// RestartLimit is not negative.
	RestartLimit int
}

// Add appends one job to b.
func (b *ReapBatch) Add(l spine.Lease, jobErr string) {
	b.JobIDs = append(b.JobIDs, l.JobID)
	b.ClaimTokens = append(b.ClaimTokens, l.ClaimToken)
	b.Errors = append(b.Errors, jobErr)
}

// ScanTagHealth reads one row of health.sql (both dialects select the same
// columns, the oldest waiting age in seconds) through scan, a driver's
// row Scan.
func ScanTagHealth(scan func(dest ...any) error) (spine.TagHealth, error) {
	var h spine.TagHealth
	var oldest float64
	err := scan(&h.Workspace, &h.Tag, &h.Waiting, &h.Scheduled, &h.Running, &h.Failed24h,
		&h.ExpiredHeartbeats, &oldest, &h.MaxAttempt, &h.MaxRestarts)
	h.OldestWaitingAge = time.Duration(oldest * float64(time.Second))
	return h, err
}
