package spine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// ListJobsParams filters and pages Lister.ListJobs. Jobs come newest
// first, ordered by (CreatedAt, ID) descending, so a page boundary is a
// stable cursor even while jobs are added.
type ListJobsParams struct {
	Workspace string
	// Statuses keeps jobs in any of these states; empty keeps all.
	Statuses []Status
	// App, Action, Tag and Trigger keep exact matches; empty keeps all.
	App, Action, Tag string
	Trigger          TriggerKind
	// After continues a listing: only jobs strictly older than this
	// position. Nil starts at the newest job.
	After *JobCursor
	// Limit bounds the page (1..MaxListLimit).
	Limit int
}

// Check refuses a listing the API should never ask for (ErrInvalid): no
// workspace, a limit out of 1..MaxListLimit, an unknown status or trigger.
func (p ListJobsParams) Check() error {
	if p.Workspace == "" {
		return fmt.Errorf("%w: workspace is required", ErrInvalid)
	}
	if p.Limit < 1 || p.Limit > MaxListLimit {
		return fmt.Errorf("%w: limit %d is outside 1..%d", ErrInvalid, p.Limit, MaxListLimit)
	}
	for _, st := range p.Statuses {
		if st != StatusQueued && st != StatusRunning && !st.Terminal() {
			return fmt.Errorf("%w: unknown status %q", ErrInvalid, st)
		}
	}
	if p.Trigger != "" && !p.Trigger.Valid() {
		return fmt.Errorf("%w: unknown trigger kind %q", ErrInvalid, p.Trigger)
	}
	return nil
}

// MaxListLimit is the largest page ListJobs answers.
const MaxListLimit = 500

// JobCursor is a position in a job listing: the last job of a page.
type JobCursor struct {
	CreatedAt time.Time
	ID        uuid.UUID
}

// Lister reads jobs for people: the API's job list and the console. It is
// not on the hot path of the queue; the store core (package store)
// implements it beside Store.
type Lister interface {
	// ListJobs returns up to p.Limit jobs of p.Workspace matching the
	// filters, newest first, in the same view as GetJob.
	ListJobs(ctx context.Context, p ListJobsParams) ([]Job, error)
	// CountJobs counts a workspace's jobs per status (queued, running,
	// success, failure, canceled), for the counts above a job listing.
	CountJobs(ctx context.Context, workspace string) (map[Status]int64, error)
}
