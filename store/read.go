package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// GetJob returns a job in any state. ErrNotFound when it is not in that
// workspace.
func (s *Store) GetJob(ctx context.Context, workspace string, id uuid.UUID) (spine.Job, error) {
	j, err := s.ex.GetJob(ctx, workspace, id)
	if err == nil && j.Status == "" {
		// A job row with no live and no finished state is no job to show.
		err = spine.ErrNotFound
	}
	if err != nil {
		return spine.Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	return j, nil
}

// AppendLog appends a chunk to an owned job's logs. ErrNotOwner when the
// token no longer matches. NUL and invalid UTF-8, which a text column
// refuses, are replaced rather than failing the job's output.
func (s *Store) AppendLog(ctx context.Context, p spine.AppendLogParams) error {
	p.Data = spine.SafeText(p.Data)
	if err := s.ex.AppendLog(ctx, p); err != nil {
		return fmt.Errorf("append log of job %s: %w", p.JobID, err)
	}
	return nil
}

// Logs returns a job's chunks with Seq > afterSeq, in order.
func (s *Store) Logs(ctx context.Context, jobID uuid.UUID, afterSeq int64) ([]spine.LogChunk, error) {
	chunks, err := s.ex.Logs(ctx, jobID, afterSeq)
	if err != nil {
		return nil, fmt.Errorf("read logs of job %s: %w", jobID, err)
	}
	return chunks, nil
}

// Audit returns a job's audit trail, oldest first.
func (s *Store) Audit(ctx context.Context, jobID uuid.UUID) ([]spine.AuditEntry, error) {
	entries, err := s.ex.Audit(ctx, jobID)
	if err != nil {
		return nil, fmt.Errorf("read audit of job %s: %w", jobID, err)
	}
	return entries, nil
}

// listStart is the cursor of a first page: after every job. Binding a
// position even then keeps the cursor an index condition in every plan.
var listStart = spine.JobCursor{
	CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
	ID:        uuid.Max,
}

// ListJobs returns up to p.Limit jobs of p.Workspace matching the
// filters, newest first, in the same view as GetJob.
func (s *Store) ListJobs(ctx context.Context, p spine.ListJobsParams) ([]spine.Job, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	if p.After == nil {
		start := listStart
		p.After = &start
	}
	jobs, err := s.ex.ListJobs(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("list jobs of %s: %w", p.Workspace, err)
	}
	return jobs, nil
}

// jobStatuses are the statuses CountJobs always answers.
var jobStatuses = []spine.Status{
	spine.StatusQueued, spine.StatusRunning, spine.StatusSuccess, spine.StatusFailure, spine.StatusCanceled,
}

// CountJobs counts a workspace's jobs per status (queued, running,
// success, failure, canceled), for the counts above a job listing; every
// status is present, zero when the workspace has none in it.
func (s *Store) CountJobs(ctx context.Context, workspace string) (map[spine.Status]int64, error) {
	counts, err := s.ex.CountJobs(ctx, workspace)
	if err != nil {
		return nil, fmt.Errorf("count jobs of %s: %w", workspace, err)
	}
	if counts == nil {
		counts = make(map[spine.Status]int64, len(jobStatuses))
	}
	for _, st := range jobStatuses {
		if _, ok := counts[st]; !ok {
			counts[st] = 0
		}
	}
	return counts, nil
}
