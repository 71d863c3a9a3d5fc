package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// Queries of spine.Lister, on the reader pool.
const (
	qListJobs  query = "list_jobs"
	qCountJobs query = "count_jobs"
)

// ListJobs returns one page of a workspace's jobs, newest first, in the
// view of GetJob (queries/list_jobs.sql), read in one statement.
func (s *Driver) ListJobs(ctx context.Context, p spine.ListJobsParams) ([]spine.Job, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	// The first page starts after every job: binding a position even then
	// keeps the cursor a range of the index.
	afterAt, afterID := int64(math.MaxInt64), uuid.Max
	if p.After != nil {
		afterAt, afterID = micros(p.After.CreatedAt), p.After.ID
	}
	statuses := make([]string, 0, len(p.Statuses))
	for _, st := range p.Statuses {
		statuses = append(statuses, string(st))
	}
	statusJSON, err := json.Marshal(statuses)
	if err != nil {
		return nil, fmt.Errorf("list jobs: encode statuses: %w", err)
	}
	rows, err := s.readerQuery(ctx, qListJobs,
		sql.Named("workspace", p.Workspace), sql.Named("after_at", afterAt), sql.Named("after_id", afterID),
		sql.Named("app", p.App), sql.Named("action", p.Action), sql.Named("tag", p.Tag),
		sql.Named("trigger", string(p.Trigger)), sql.Named("statuses", string(statusJSON)),
		sql.Named("limit", p.Limit))
	if err != nil {
		return nil, fmt.Errorf("list jobs of %s: %w", p.Workspace, err)
	}
	jobs, err := collect(rows, scanJob)
	if err != nil {
		return nil, fmt.Errorf("list jobs of %s: %w", p.Workspace, err)
	}
	return jobs, nil
}

// CountJobs counts a workspace's jobs per status; every status is present,
// zero when the workspace has none in it.
func (s *Driver) CountJobs(ctx context.Context, workspace string) (map[spine.Status]int64, error) {
	rows, err := s.readerQuery(ctx, qCountJobs, sql.Named("workspace", workspace))
	if err != nil {
		return nil, fmt.Errorf("count jobs of %s: %w", workspace, err)
	}
	type count struct {
		status string
		n      int64
	}
	got, err := collect(rows, func(rows *sql.Rows) (count, error) {
		var c count
		return c, rows.Scan(&c.status, &c.n)
	})
	if err != nil {
		return nil, fmt.Errorf("count jobs of %s: %w", workspace, err)
	}
	counts := map[spine.Status]int64{spine.StatusQueued: 0, spine.StatusRunning: 0,
		spine.StatusSuccess: 0, spine.StatusFailure: 0, spine.StatusCanceled: 0}
	for _, c := range got {
		counts[spine.Status(c.status)] += c.n
	}
	return counts, nil
}
