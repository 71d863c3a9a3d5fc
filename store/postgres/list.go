package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// Queries of spine.Lister.
var (
	qListJobs  = mustQuery("list_jobs")
	qCountJobs = mustQuery("count_jobs")
	// qListJobsRare is list_jobs driven from job_completed's indexes, for a
	// filter on failure and canceled only: those are a small share of a
	// workspace's jobs, so reading them and sorting beats walking job_list
	// past every success. It is list_jobs with the outer join made inner
	// and indexable, so the two stay one query text.
	qListJobsRare = mustReplace(qListJobs, "LEFT JOIN job_completed c ON c.job_id = j.id",
		"JOIN job_completed c ON c.job_id = j.id AND c.workspace = @workspace AND c.status = ANY (@statuses::text[])")
)

// mustReplace replaces old, which must occur once, in query.
func mustReplace(query, old, new string) string {
	if strings.Count(query, old) != 1 {
		panic("store/postgres: query lacks " + old)
	}
	return strings.Replace(query, old, new, 1)
}

// rareOnly reports whether statuses name only failure and canceled.
func rareOnly(statuses []spine.Status) bool {
	for _, st := range statuses {
		if st != spine.StatusFailure && st != spine.StatusCanceled {
			return false
		}
	}
	return len(statuses) > 0
}

// listStart is the cursor of a first page: after every job. Binding a
// position even then keeps the cursor an index condition in every plan.
var listStart = spine.JobCursor{
	CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
	ID:        uuid.Max,
}

// ListJobs returns one page of a workspace's jobs, newest first, in the
// view of GetJob (queries/list_jobs.sql).
func (s *Driver) ListJobs(ctx context.Context, p spine.ListJobsParams) ([]spine.Job, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	after := listStart
	if p.After != nil {
		after = *p.After
	}
	statuses := make([]string, 0, len(p.Statuses))
	for _, st := range p.Statuses {
		statuses = append(statuses, string(st))
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	query := qListJobs
	if rareOnly(p.Statuses) {
		query = qListJobsRare
	}
	rows, err := s.pool.Query(ctx, query, pgx.StrictNamedArgs{
		"workspace": p.Workspace, "after_at": after.CreatedAt, "after_id": after.ID,
		"app": p.App, "action": p.Action, "tag": p.Tag, "trigger": string(p.Trigger),
		"statuses": statuses, "limit": p.Limit,
	})
	if err != nil {
		return nil, fmt.Errorf("list jobs of %s: %w", p.Workspace, translate(err))
	}
	jobs, err := pgx.CollectRows(rows, scanJob)
	if err != nil {
		return nil, fmt.Errorf("list jobs of %s: %w", p.Workspace, translate(err))
	}
	return jobs, nil
}

// CountJobs counts a workspace's jobs per status; every status is present,
// zero when the workspace has none in it.
func (s *Driver) CountJobs(ctx context.Context, workspace string) (map[spine.Status]int64, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, qCountJobs, pgx.StrictNamedArgs{"workspace": workspace})
	if err != nil {
		return nil, fmt.Errorf("count jobs of %s: %w", workspace, translate(err))
	}
	counts := map[spine.Status]int64{spine.StatusQueued: 0, spine.StatusRunning: 0,
		spine.StatusSuccess: 0, spine.StatusFailure: 0, spine.StatusCanceled: 0}
	var status string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		counts[spine.Status(status)] += n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count jobs of %s: %w", workspace, translate(err))
	}
	return counts, nil
}
