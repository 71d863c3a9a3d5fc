package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// MaxRequeueBatch bounds one bulk requeue: a call requeues at most this
// many jobs, and names at most this many ids. Each job is its own
// transaction (the single requeue's), so a batch holds no lock over its
// siblings and a large move is many short calls, not one long one.
const MaxRequeueBatch = 100

// RequeueFilter picks the waiting jobs of a bulk requeue (DESIGN §4,
// POST /api/w/{ws}/jobs/requeue): jobs of App, Action and Tag (the pinned
// tag), and, when IDs is set, only those jobs. At least one of them is
// required, so no call requeues a whole workspace by accident.
type RequeueFilter struct {
	Workspace        string
	App, Action, Tag string
	// IDs names the jobs (at most MaxRequeueBatch); each must also match
	// App, Action and Tag where those are set.
	IDs []uuid.UUID
	// After continues a filtered requeue past the previous batch's last
	// job (RequeueBatch.Next); not with IDs.
	After *spine.JobCursor
	// Limit bounds the jobs of a filtered batch (1..MaxRequeueBatch; 0 is
	// MaxRequeueBatch).
	Limit int
	// Actor is who requeues, for the canceled jobs' canceled_by.
	Actor string
}

// Check refuses a filter that picks nothing or too much (spine.ErrInvalid),
// before anything is read or written.
func (f RequeueFilter) Check() error {
	switch {
	case f.Workspace == "":
		return fmt.Errorf("%w: workspace is required", spine.ErrInvalid)
	case f.App == "" && f.Action == "" && f.Tag == "" && len(f.IDs) == 0:
		return fmt.Errorf("%w: name at least one of app, action, tag or ids", spine.ErrInvalid)
	case len(f.IDs) > MaxRequeueBatch:
		return fmt.Errorf("%w: %d ids, at most %d per call", spine.ErrInvalid, len(f.IDs), MaxRequeueBatch)
	case len(f.IDs) > 0 && f.After != nil:
		return fmt.Errorf("%w: a cursor continues a filtered requeue, not a list of ids", spine.ErrInvalid)
	case f.Limit < 0 || f.Limit > MaxRequeueBatch:
		return fmt.Errorf("%w: limit %d is outside 1..%d", spine.ErrInvalid, f.Limit, MaxRequeueBatch)
	}
	for _, id := range f.IDs {
		if id == uuid.Nil {
			return fmt.Errorf("%w: the nil uuid names no job", spine.ErrInvalid)
		}
	}
	return nil
}

// Requeued is one job a bulk requeue moved: From is canceled, To waits in
// its place pinned to the catalog as it is now.
type Requeued struct {
	From, To uuid.UUID
}

// RequeueSkip is one job a bulk requeue left as it was, and why: a
// spine.ErrConflict (running, finished, claimed meanwhile, not matching
// the filter), a spine.ErrNotFound (no such job, or its action is gone
// from the catalog) or an *InputError (the current schema refuses its
// input).
type RequeueSkip struct {
	ID  uuid.UUID
	Err error
}

// RequeueBatch is what one bulk requeue call did.
type RequeueBatch struct {
	Requeued []Requeued
	Skipped  []RequeueSkip
	// Next continues a filtered requeue when more waiting jobs matched
	// than the batch's limit; nil when none are left. Jobs are visited
	// newest first and the new jobs are newer than every one visited, so
	// continuing from Next never requeues a job twice.
	Next *spine.JobCursor
}

// RequeueWaiting requeues the waiting jobs f picks, each exactly as
// Requeue does (its own transaction through the store's Requeue, counted
// under its trigger). A job that cannot be requeued is skipped with its
// reason and the others go on; an error that is not about one job (the
// database is gone, the request ended) stops the batch and is returned
// with what was done until then, which stays done.
func (e *Enqueuer) RequeueWaiting(ctx context.Context, jobs spine.Lister, f RequeueFilter) (RequeueBatch, error) {
	if err := f.Check(); err != nil {
		return RequeueBatch{}, fmt.Errorf("bulk requeue: %w", err)
	}
	var b RequeueBatch
	ids, err := e.pick(ctx, jobs, f, &b)
	if err != nil {
		return b, err
	}
	for _, id := range ids {
		res, err := e.Requeue(ctx, f.Workspace, id, f.Actor)
		switch {
		case err == nil:
			b.Requeued = append(b.Requeued, Requeued{From: id, To: res.ID})
		case jobError(err) && ctx.Err() == nil:
			b.Skipped = append(b.Skipped, RequeueSkip{ID: id, Err: err})
		default:
			return b, fmt.Errorf("bulk requeue: %w", err)
		}
	}
	return b, nil
}

// pick lists the ids to requeue: the named ids that exist, match the
// filter and wait (the others are skipped into b), or a page of the
// waiting jobs matching the filter (setting b.Next when more match).
func (e *Enqueuer) pick(ctx context.Context, jobs spine.Lister, f RequeueFilter, b *RequeueBatch) ([]uuid.UUID, error) {
	if len(f.IDs) > 0 {
		var ids []uuid.UUID
		for _, id := range f.IDs {
			if slices.Contains(ids, id) || slices.ContainsFunc(b.Skipped, func(s RequeueSkip) bool { return s.ID == id }) {
				continue // a repeated id is one job
			}
			j, err := e.Store.GetJob(ctx, f.Workspace, id)
			if err == nil {
				err = f.match(j)
			}
			if err != nil {
				if !jobError(err) {
					return nil, fmt.Errorf("bulk requeue: read job %s: %w", id, err)
				}
				b.Skipped = append(b.Skipped, RequeueSkip{ID: id, Err: err})
				continue
			}
			ids = append(ids, id)
		}
		return ids, nil
	}
	limit := f.Limit
	if limit == 0 {
		limit = MaxRequeueBatch
	}
	// One job more than the limit says whether a next batch exists.
	page, err := jobs.ListJobs(ctx, spine.ListJobsParams{Workspace: f.Workspace, Statuses: []spine.Status{spine.StatusQueued},
		App: f.App, Action: f.Action, Tag: f.Tag, After: f.After, Limit: limit + 1})
	if err != nil {
		return nil, fmt.Errorf("bulk requeue: list the waiting jobs: %w", err)
	}
	if len(page) > limit {
		page = page[:limit]
		last := page[limit-1]
		b.Next = &spine.JobCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	ids := make([]uuid.UUID, 0, len(page))
	for _, j := range page {
		ids = append(ids, j.ID)
	}
	return ids, nil
}

// match is nil when j is a waiting job of the filter's app, action and
// tag, else the conflict that names what differs (spine.RequeueRule's
// for a job that does not wait).
func (f RequeueFilter) match(j spine.Job) error {
	for _, c := range []struct{ what, want, got string }{
		{"app", f.App, j.Pin.AppKey}, {"action", f.Action, j.Pin.ActionKey}, {"tag", f.Tag, j.Pin.Tag},
	} {
		if c.want != "" && c.want != c.got {
			return fmt.Errorf("%w: job %s has %s %q, not the filter's %q", spine.ErrConflict, j.ID, c.what, c.got, c.want)
		}
	}
	if err := spine.RequeueRule(j.Status); err != nil {
		return fmt.Errorf("job %s: %w", j.ID, err)
	}
	return nil
}

// jobError reports whether err is about one job (skip it and go on)
// rather than about the batch (stop).
func jobError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie) || errors.Is(err, spine.ErrNotFound) || errors.Is(err, spine.ErrConflict) ||
		errors.Is(err, ErrConflict) || errors.Is(err, ErrInvalidInput) || errors.Is(err, spine.ErrInvalid) ||
		errors.Is(err, ErrMissingSecret)
}
