package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// runQuery is the decoded query of POST …/jobs/run/{app}/{action}.
type runQuery struct {
	wait         time.Duration
	coalesceKey  string
	priority     int
	scheduledFor time.Time
}

// parseRunQuery reads ?wait, ?coalesce_key, ?priority, ?scheduled_for;
// a malformed value is 400.
func (s *Server) parseRunQuery(r *http.Request) (runQuery, error) {
	q := r.URL.Query()
	var rq runQuery
	if v := q.Get("wait"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return rq, errorf(http.StatusBadRequest, CodeBadRequest, "?wait=%q: want a Go duration like 30s", v)
		}
		rq.wait = min(d, s.cfg.MaxWait)
	}
	rq.coalesceKey = q.Get("coalesce_key")
	if strings.ContainsRune(rq.coalesceKey, 0) {
		return rq, errorf(http.StatusBadRequest, CodeBadRequest, "?coalesce_key holds a NUL character")
	}
	if v := q.Get("priority"); v != "" {
		p, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return rq, errorf(http.StatusBadRequest, CodeBadRequest, "?priority=%q: want an integer", v)
		}
		rq.priority = int(p)
	}
	if v := q.Get("scheduled_for"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return rq, errorf(http.StatusBadRequest, CodeBadRequest, "?scheduled_for=%q: want an RFC 3339 time", v)
		}
		rq.scheduledFor = t
	}
	return rq, nil
}

// runJob enqueues (app, action) through the one enqueue path: trigger api
// (cli with X-Windforce-Trigger: cli; child for a job token). 201 {"id"};
// with ?wait, 200 with the outcome once finished or 202 {"id","status"}.
func (s *Server) runJob(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	rq, err := s.parseRunQuery(r)
	if err != nil {
		return nil, err
	}
	body, err := inputBody(w, r, s.cfg.MaxInputBytes)
	if err != nil {
		return nil, err
	}
	req := catalog.EnqueueRequest{
		Workspace: r.PathValue("ws"), App: r.PathValue("app"), Action: r.PathValue("action"),
		TriggerKind: spine.TriggerAPI, CreatedBy: c.name(), Input: body,
		Priority: rq.priority, ScheduledFor: rq.scheduledFor, CoalesceKey: rq.coalesceKey,
	}
	switch {
	case c.job != nil:
		if err := s.checkChildDepth(r.Context(), req.Workspace, c.job.JobID); err != nil {
			return nil, err
		}
		req.TriggerKind, req.TriggerRef = spine.TriggerChild, c.job.JobID.String()
	case strings.EqualFold(r.Header.Get("X-Windforce-Trigger"), "cli"):
		req.TriggerKind = spine.TriggerCLI
	case strings.EqualFold(r.Header.Get("X-Windforce-Trigger"), "seed"):
		req.TriggerKind = spine.TriggerSeed
	}
	var early <-chan spine.Finished
	if rq.wait > 0 {
		release, err := s.holdWait(c)
		if err != nil {
			return nil, err
		}
		defer release()
		// The job's id is chosen here and its completion subscribed to
		// before the enqueue, so the wait needs no read of the job before
		// its completion wakes it: one read per ?wait instead of two.
		if req.ID, err = uuid.NewV7(); err != nil {
			return nil, fmt.Errorf("run: new job id: %w", err)
		}
		var stop func()
		early, stop = s.cfg.Store.SubscribeCompletion(req.ID)
		defer stop()
		// Answered with its outcome, whose synced commit makes the enqueue
		// durable too; any other answer syncs first (waited). A coalesced
		// request is folded in a transaction of its own, always synced.
		req.Unsynced = req.CoalesceKey == ""
	}
	res, err := s.enq.Enqueue(r.Context(), req)
	if err != nil {
		return nil, err
	}
	if rq.wait <= 0 {
		return &reply{status: http.StatusCreated, body: map[string]any{"id": res.ID.String()}}, nil
	}
	if res.ID != req.ID {
		early = nil // folded into the waiting job holding the coalesce key
	}
	// The wait may outlast the server's write timeout; it gets its own.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(rq.wait + time.Minute))
	return s.wait(r, req.Workspace, res.ID, rq.wait, early)
}

// wait answers once the job finishes, or when d passes (or the client
// goes) with its status. It is woken by the job's completion: subscribed
// before the job existed (done, from runJob), it reads the job only once
// woken; otherwise it subscribes first and reads the job second, so a
// completion committed in between is not missed. A wake-up that carries
// the job's outcome is the answer (the store sent it after the
// completion committed); any other wake-up makes it read the job again. A
// slow poll every WaitPoll is the fallback for a lost one.
func (s *Server) wait(r *http.Request, ws string, id uuid.UUID, d time.Duration, done <-chan spine.Finished) (any, error) {
	read := done == nil
	if read {
		var stop func()
		done, stop = s.cfg.Store.SubscribeCompletion(id)
		defer stop()
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	poll := time.NewTicker(s.cfg.WaitPoll)
	defer poll.Stop()
	for {
		if read {
			j, err := s.cfg.Store.GetJob(r.Context(), ws, id)
			if err != nil {
				return nil, err
			}
			if j.Status.Terminal() {
				return outcome(j), nil
			}
		}
		read = true
		select {
		case <-r.Context().Done(): // client gone or server shutting down
			return s.waited(r, ws, id)
		case <-deadline.C:
			return s.waited(r, ws, id)
		case f := <-done:
			if f.Carries() {
				return finishedOutcome(f), nil
			}
		case <-poll.C:
		}
	}
}

// waited answers a wait that ended before the job did: 202 with the
// job's status as of now (or 200 with its outcome, had it just ended). It
// reads past the request's end: a server shutting down still answers. A
// 202 names a job its enqueue may not have flushed (runJob enqueues a
// ?wait unsynced), so the store syncs before it.
func (s *Server) waited(r *http.Request, ws string, id uuid.UUID) (any, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	j, err := s.cfg.Store.GetJob(ctx, ws, id)
	if err != nil {
		return nil, err
	}
	if j.Status.Terminal() {
		return outcome(j), nil
	}
	if err := s.cfg.Store.Sync(ctx); err != nil {
		return nil, err
	}
	return &reply{status: http.StatusAccepted, body: outcome(j)}, nil
}

// jobID parses the path's {id}; a malformed id names no job (404).
func jobID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return uuid.Nil, errorf(http.StatusNotFound, CodeNotFound, "no job %q in workspace %q", r.PathValue("id"), r.PathValue("ws"))
	}
	return id, nil
}

// lookup reads the path's job in the path's workspace.
func (s *Server) lookup(r *http.Request) (spine.Job, error) {
	id, err := jobID(r)
	if err != nil {
		return spine.Job{}, err
	}
	return s.cfg.Store.GetJob(r.Context(), r.PathValue("ws"), id)
}

// getJob answers the job shape of DESIGN §4.
func (s *Server) getJob(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	j, err := s.lookup(r)
	if err != nil {
		return nil, err
	}
	return s.viewJobLabeled(r.Context(), j)
}

// getResult answers 200 with the outcome of a finished job, 202 {"status"}
// while it is queued or running.
func (s *Server) getResult(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	j, err := s.lookup(r)
	if err != nil {
		return nil, err
	}
	if !j.Status.Terminal() {
		return &reply{status: http.StatusAccepted, body: outcome(j)}, nil
	}
	return outcome(j), nil
}

// getLogs answers the job's output as text; with ?follow=1 it streams it
// as server-sent events until the job ends (logs_follow.go).
func (s *Server) getLogs(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	j, err := s.lookup(r)
	if err != nil {
		return nil, err
	}
	if followRequested(r) {
		release, err := s.holdFollow(c)
		if err != nil {
			return nil, err
		}
		defer release()
		return s.followLogs(w, r, j)
	}
	chunks, err := s.cfg.Store.Logs(r.Context(), j.ID, 0)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, ch := range chunks {
		b.WriteString(ch.Data)
	}
	return text(b.String()), nil
}

// cancelJob cancels a job ({"reason"}): a waiting one at once, a running
// one through its worker; 409 for a finished job.
func (s *Server) cancelJob(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	var body struct {
		Reason string `json:"reason"`
	}
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &body); err != nil {
		return nil, err
	}
	id, err := jobID(r)
	if err != nil {
		return nil, err
	}
	out, err := s.cfg.Store.Cancel(r.Context(), spine.CancelParams{Workspace: r.PathValue("ws"), JobID: id, By: c.name(), Reason: body.Reason})
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": id.String(), "status": out.Status}, nil
}

// reopenJob runs a failed (or, with force, canceled) job again under the
// same id; operator scope only.
func (s *Server) reopenJob(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	var body struct {
		Reason string `json:"reason"`
		Force  bool   `json:"force"`
	}
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &body); err != nil {
		return nil, err
	}
	id, err := jobID(r)
	if err != nil {
		return nil, err
	}
	err = s.cfg.Store.Reopen(r.Context(), spine.ReopenParams{Workspace: r.PathValue("ws"), JobID: id,
		By: c.name(), Reason: body.Reason, Force: body.Force})
	if err != nil {
		return nil, err
	}
	return map[string]any{"id": id.String(), "status": spine.StatusQueued}, nil
}
