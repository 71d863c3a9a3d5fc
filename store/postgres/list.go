package postgres

import (
	"context"
	"strings"

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

// ListJobs reads one page of a workspace's jobs, newest first, in the
// view of GetJob (queries/list_jobs.sql; qListJobsRare for a filter on
// failure and canceled only) (driver.QueueExecutor).
func (e *executor) ListJobs(ctx context.Context, p spine.ListJobsParams) ([]spine.Job, error) {
	statuses := make([]string, 0, len(p.Statuses))
	for _, st := range p.Statuses {
		statuses = append(statuses, string(st))
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	query := qListJobs
	if rareOnly(p.Statuses) {
		query = qListJobsRare
	}
	rows, err := e.q.Query(ctx, query, namedArgs{
		"workspace": p.Workspace, "after_at": p.After.CreatedAt, "after_id": p.After.ID,
		"app": p.App, "action": p.Action, "tag": p.Tag, "trigger": string(p.Trigger),
		"statuses": statuses, "limit": p.Limit,
	})
	if err != nil {
		return nil, translate(err)
	}
	jobs, err := pgx.CollectRows(rows, scanJob)
	if err != nil {
		return nil, translate(err)
	}
	return jobs, nil
}

// CountJobs counts a workspace's jobs per status (driver.QueueExecutor).
func (e *executor) CountJobs(ctx context.Context, workspace string) (map[spine.Status]int64, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	rows, err := e.q.Query(ctx, qCountJobs, namedArgs{"workspace": workspace})
	if err != nil {
		return nil, translate(err)
	}
	counts := make(map[spine.Status]int64, 5)
	var status string
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		counts[spine.Status(status)] += n
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	return counts, nil
}
