package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/windforce/windforce/spine"
)

// Queries of spine.Lister, on the reader pool.
const (
	qListJobs  query = "list_jobs"
	qCountJobs query = "count_jobs"
)

// ListJobs reads one page of a workspace's jobs, newest first, in the
// view of GetJob (queries/list_jobs.sql), in one statement on the reader
// pool (driver.QueueExecutor).
func (e *executor) ListJobs(ctx context.Context, p spine.ListJobsParams) ([]spine.Job, error) {
	statuses := make([]string, 0, len(p.Statuses))
	for _, st := range p.Statuses {
		statuses = append(statuses, string(st))
	}
	statusJSON, err := json.Marshal(statuses)
	if err != nil {
		return nil, fmt.Errorf("encode statuses: %w", err)
	}
	rows, err := e.read(ctx, qListJobs,
		sql.Named("workspace", p.Workspace), sql.Named("after_at", micros(p.After.CreatedAt)), sql.Named("after_id", p.After.ID),
		sql.Named("app", p.App), sql.Named("action", p.Action), sql.Named("tag", p.Tag),
		sql.Named("trigger", string(p.Trigger)), sql.Named("statuses", string(statusJSON)),
		sql.Named("limit", p.Limit))
	if err != nil {
		return nil, err
	}
	return collect(rows, scanJob)
}

// CountJobs counts a workspace's jobs per status on the reader pool
// (driver.QueueExecutor).
func (e *executor) CountJobs(ctx context.Context, workspace string) (map[spine.Status]int64, error) {
	rows, err := e.read(ctx, qCountJobs, sql.Named("workspace", workspace))
	if err != nil {
		return nil, err
	}
	counts := make(map[spine.Status]int64, 5)
	var status string
	var n int64
	for rows.Next() {
		if err := rows.Scan(&status, &n); err != nil {
			rows.Close()
			return nil, err
		}
		counts[spine.Status(status)] += n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return counts, rows.Close()
}
