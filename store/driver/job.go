package driver

import (
	"context"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// JobExecutor enqueues and requeues jobs. Its enqueue operations take
// requests spine.PrepareEnqueue has checked and filled; a zero Now (and
// ScheduledFor) is the database's clock, read when the statement runs.
type JobExecutor interface {
	// EnqueueInsert inserts one job (queries/enqueue.sql): its waiting
	// job_queue row, its job row with the pin, and the pin's schemas in
	// job_schema, once per content. With notify it wakes the job's tag
	// when the transaction commits (on the pool: at once). inserted is
	// false, and nothing is written, when a waiting job already holds p's
	// coalesce key: fold into it with EnqueueCoalesce instead (invariant
	// 10). A repeated id is spine.ErrConflict.
	EnqueueInsert(ctx context.Context, p spine.EnqueueParams, notify bool) (res spine.EnqueueResult, inserted bool, err error)

	// EnqueueCoalesce folds p into the waiting job holding its (workspace,
	// app, action, coalesce key) when that job's pin equals p's
	// (queries/enqueue_coalesce.sql, invariant 10): p's input replaces
	// the job's, the generation counts the request (on the job row too),
	// and with notify the tag is woken on commit. ok is false, and nothing
	// is written, when no job waits with that key (a claimed job no
	// longer holds it) or the one waiting is pinned otherwise.
	EnqueueCoalesce(ctx context.Context, p spine.EnqueueParams, notify bool) (res spine.EnqueueResult, ok bool, err error)

	// EnqueueCoalesceRelease clears the coalesce key of the waiting job
	// holding p's (workspace, app, action, coalesce key) when that job's
	// pin differs from p's (queries/enqueue_coalesce_release.sql): the job
	// keeps its pin and input and runs as it is, and the key is free for
	// EnqueueInsert. released is false when no such job waits.
	EnqueueCoalesceRelease(ctx context.Context, p spine.EnqueueParams) (released bool, err error)

	// Sync returns once every commit that returned before it is durable,
	// the unsynced enqueues (spine.EnqueueParams.Unsynced) too: on
	// Postgres one synced commit, which flushes the WAL before it; SQLite,
	// whose enqueues are always synced, has nothing to do.
	Sync(ctx context.Context) error

	// EnqueueInsertBatch inserts jobs without a coalesce key
	// (queries/enqueue_batch.sql), each as EnqueueInsert would, and wakes
	// each of tags once on commit, also when ps is empty. Any failure (a
	// repeated id: spine.ErrConflict) fails the whole batch; run it in a
	// transaction so nothing of it stays.
	EnqueueInsertBatch(ctx context.Context, ps []spine.EnqueueParams, tags []string) error

	// RequeueJobLock locks the live job id of workspace
	// (queries/requeue_job_lock.sql) and returns its status with the
	// request that enqueues it again: its trigger, creator, input, app and
	// action, and the queue row's priority, schedule and coalesce key. A
	// job that is not live comes back with its terminal status and no
	// request, an unknown one (or one of another workspace) with the empty
	// status; spine.RequeueRule judges both.
	RequeueJobLock(ctx context.Context, workspace string, id uuid.UUID) (catalog.EnqueueRequest, spine.Status, error)
}
