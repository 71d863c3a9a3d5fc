package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// Defaults of the per-caller limits of Config.
const (
	// DefaultMaxWaiters bounds one token's open ?wait requests.
	DefaultMaxWaiters = 100
	// DefaultMaxFollowers bounds one token's open logs ?follow=1 streams.
	DefaultMaxFollowers = 20
	// DefaultMaxChildDepth bounds how deep jobs may enqueue jobs: a job
	// enqueued by a job enqueued by … a top-level job.
	DefaultMaxChildDepth = 16
)

// CodeLimit is the error code of a request over one of the server's
// limits (429 for concurrency, 422 for the child depth).
const CodeLimit = "limit_exceeded"

// openCounter counts what each caller holds open (waits, streams) in this
// process, to refuse one more past a bound.
type openCounter struct {
	mu   sync.Mutex
	open map[string]int
}

// acquire counts one more for key unless it holds max already; release
// undoes it.
func (o *openCounter) acquire(key string, max int) (release func(), ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.open == nil {
		o.open = map[string]int{}
	}
	if o.open[key] >= max {
		return nil, false
	}
	o.open[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.open[key]--; o.open[key] <= 0 {
				delete(o.open, key)
			}
		})
	}, true
}

// callerKey is who a per-caller limit counts: the API token, or the job
// of a WF_TOKEN.
func callerKey(c *caller) string {
	if c.job != nil {
		return "job:" + c.job.JobID.String()
	}
	return c.token.Actor()
}

// holdWait counts one ?wait of c, or refuses it with 429 before anything
// is enqueued, so a refused run creates no job.
func (s *Server) holdWait(c *caller) (func(), error) {
	release, ok := s.waiters.acquire(callerKey(c), s.cfg.MaxWaiters)
	if !ok {
		return nil, errorf(http.StatusTooManyRequests, CodeLimit,
			"this token already has %d ?wait requests open (WINDFORCE_MAX_WAITERS_PER_TOKEN); run without ?wait and poll GET …/jobs/{id}/result, or wait for one to end",
			s.cfg.MaxWaiters)
	}
	return release, nil
}

// holdFollow counts one log stream of c, or refuses it with 429.
func (s *Server) holdFollow(c *caller) (func(), error) {
	release, ok := s.followers.acquire(callerKey(c), s.cfg.MaxFollowers)
	if !ok {
		return nil, errorf(http.StatusTooManyRequests, CodeLimit,
			"this token already follows %d log streams (WINDFORCE_MAX_FOLLOWERS_PER_TOKEN); close one, or read the logs without ?follow",
			s.cfg.MaxFollowers)
	}
	return release, nil
}

// checkChildDepth refuses a child job past MaxChildDepth: parent is the
// job whose WF_TOKEN enqueues, and the depth is counted by walking the
// child jobs' trigger_ref up to a job no job enqueued. The walk stops at
// the bound, so it reads at most MaxChildDepth jobs.
func (s *Server) checkChildDepth(ctx context.Context, ws string, parent uuid.UUID) error {
	id := parent
	for depth := 1; ; depth++ {
		if depth > s.cfg.MaxChildDepth {
			e := errorf(http.StatusUnprocessableEntity, CodeLimit,
				"job %s is already %d levels of child jobs deep: a job may enqueue children at most %d levels deep (WINDFORCE_MAX_CHILD_DEPTH); a job that enqueues itself needs a stop condition",
				parent, s.cfg.MaxChildDepth, s.cfg.MaxChildDepth)
			e.Details = map[string]any{"max_depth": s.cfg.MaxChildDepth}
			return e
		}
		j, err := s.cfg.Store.GetJob(ctx, ws, id)
		if errors.Is(err, spine.ErrNotFound) && id != parent { // an ancestor the sweep removed
			return nil
		}
		if err != nil {
			return fmt.Errorf("count child depth: %w", err)
		}
		if j.TriggerKind != spine.TriggerChild {
			return nil
		}
		next, err := uuid.Parse(j.TriggerRef)
		if err != nil { // not a job id: nothing further up to count
			return nil
		}
		id = next
	}
}
