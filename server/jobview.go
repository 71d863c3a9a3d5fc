package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/spine"
)

// JobView is the job shape of DESIGN §4, as the API answers it and the
// CLI reads it. Fields may be added, never
// renamed; absent times and values are null.
type JobView struct {
	ID             string          `json:"id"`
	Workspace      string          `json:"workspace"`
	Status         spine.Status    `json:"status"`
	App            string          `json:"app"`
	Action         string          `json:"action"`
	CommitSHA      string          `json:"commit_sha"`
	GitSourceID    string          `json:"git_source_id"`
	Entrypoint     string          `json:"entrypoint"`
	Runtime        string          `json:"runtime"`
	Tag            string          `json:"tag"`
	Priority       int             `json:"priority"`
	TriggerKind    string          `json:"trigger_kind"`
	TriggerRef     string          `json:"trigger_ref"`
	CreatedBy      string          `json:"created_by"`
	Attempt        int             `json:"attempt"`
	Restarts       int             `json:"restarts"`
	Worker         string          `json:"worker"`
	Input          json.RawMessage `json:"input"`
	CoalesceKey    string          `json:"coalesce_key"`
	Timeout        string          `json:"timeout"`
	CreatedAt      time.Time       `json:"created_at"`
	ScheduledFor   *time.Time      `json:"scheduled_for"`
	StartedAt      *time.Time      `json:"started_at"`
	CompletedAt    *time.Time      `json:"completed_at"`
	Result         json.RawMessage `json:"result"`
	Error          *spine.JobError `json:"error"`
	LastError      *spine.JobError `json:"last_error"`
	CanceledBy     string          `json:"canceled_by"`
	CanceledReason string          `json:"canceled_reason"`
	// Limits are the pinned manifest limits (memory in bytes, pids, cpu in
	// cores), before the worker caps them; absent when none is set.
	Limits *spine.Limits `json:"limits,omitempty"`
	// Env is the pinned environment as the manifest writes it: literals
	// and {"secret": NAME} references, never a secret's value; absent when
	// there is none.
	Env EnvView `json:"env,omitempty"`
	// Warm is the pinned warm-runtime policy; absent for a cold job.
	Warm *WarmView `json:"warm,omitempty"`
	// CreatedByLabel and CanceledByLabel are the labels of the tokens in
	// CreatedBy and CanceledBy ("token:<id>"), shown beside the audit
	// identity, never in its place. Only GET …/jobs/{id} fills them;
	// omitted when empty (not a token, no label).
	CreatedByLabel  string `json:"created_by_label,omitempty"`
	CanceledByLabel string `json:"canceled_by_label,omitempty"`
	// Generation counts the requests the job held when it was claimed
	// (so far, while it waits); 1 for a job never coalesced into.
	Generation int64 `json:"generation"`
	// SupersededBy is the newest job of the same workspace, app, action
	// and coalesce key created after this one, null when there is none:
	// a job that finds it set discards its result (docs/QUEUE.md).
	SupersededBy *string `json:"superseded_by"`
	// Secrets are the workspace secrets the job's last attempt received
	// at claim, by name and version ("slack_token@3", DESIGN §8); empty
	// until a worker resolved them, and for a job that names none.
	Secrets []string `json:"secrets"`
}

// ViewJob renders j in the API shape.
func ViewJob(j spine.Job) JobView {
	return JobView{
		ID: j.ID.String(), Workspace: j.Workspace, Status: j.Status,
		App: j.Pin.AppKey, Action: j.Pin.ActionKey, CommitSHA: j.Pin.CommitSHA, GitSourceID: j.Pin.GitSourceID,
		Entrypoint: j.Pin.Entrypoint, Runtime: j.Pin.Runtime, Tag: j.Pin.Tag, Priority: j.Priority,
		TriggerKind: string(j.TriggerKind), TriggerRef: j.TriggerRef, CreatedBy: j.CreatedBy,
		Attempt: j.Attempt, Restarts: j.Restarts, Worker: j.Worker, Input: j.Input,
		CoalesceKey: j.CoalesceKey, Generation: j.Generation, SupersededBy: supersededBy(j),
		Timeout:   j.Pin.Timeout.String(),
		CreatedAt: j.CreatedAt, ScheduledFor: timeOrNil(j.ScheduledFor), StartedAt: j.StartedAt, CompletedAt: j.CompletedAt,
		Result: j.Result, Error: j.Error, LastError: j.LastError,
		CanceledBy: j.CanceledBy, CanceledReason: j.CanceledReason,
		Limits: limitsOrNil(j.Pin.Limits), Env: viewEnv(j.Pin.Env), Warm: viewWarm(j.Pin.Warm),
		Secrets: orEmpty(j.Secrets),
	}
}

// orEmpty is s, or an empty list for nil (the job view shows [], not null).
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// viewJobLabeled is ViewJob with the labels of the tokens in created_by
// and canceled_by, read from their token records (revoked ones too). Job
// lists leave them out rather than look up a token per row.
func (s *Server) viewJobLabeled(ctx context.Context, j spine.Job) (JobView, error) {
	v := ViewJob(j)
	var err error
	if v.CreatedByLabel, err = auth.ActorLabel(ctx, s.cfg.Store, j.CreatedBy); err != nil {
		return JobView{}, err
	}
	if v.CanceledByLabel, err = auth.ActorLabel(ctx, s.cfg.Store, j.CanceledBy); err != nil {
		return JobView{}, err
	}
	return v, nil
}

// supersededBy is the id of the job that superseded j, nil for none.
func supersededBy(j spine.Job) *string {
	if j.SupersededBy == uuid.Nil {
		return nil
	}
	id := j.SupersededBy.String()
	return &id
}

// Superseded is the answer of GET …/jobs/{id}/superseded: the one call a
// coalesced job makes with its WF_TOKEN before writing its side effects.
type Superseded struct {
	ID         string `json:"id"`
	Generation int64  `json:"generation"`
	// Superseded is true when a newer request for the same coalesce key
	// exists; SupersededBy names the newest.
	Superseded   bool    `json:"superseded"`
	SupersededBy *string `json:"superseded_by"`
}

// getSuperseded answers whether a newer job of the same coalesce key
// exists (Superseded). A job's own WF_TOKEN may call it.
func (s *Server) getSuperseded(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	j, err := s.lookup(r)
	if err != nil {
		return nil, err
	}
	by := supersededBy(j)
	return Superseded{ID: j.ID.String(), Generation: j.Generation, Superseded: by != nil, SupersededBy: by}, nil
}

// limitsOrNil drops limits that set nothing, so the field is omitted.
func limitsOrNil(l spine.Limits) *spine.Limits {
	if l == (spine.Limits{}) {
		return nil
	}
	return &l
}

// timeOrNil is nil for the zero time: a finished job has no
// scheduled_for any more (it lived in its queue row).
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// outcome is the body of a finished or waited-on job: {"id","status"}
// plus "result" on success or "error" otherwise, once finished.
func outcome(j spine.Job) map[string]any {
	out := map[string]any{"id": j.ID.String(), "status": j.Status}
	if !j.Status.Terminal() {
		return out
	}
	if j.Status == spine.StatusSuccess {
		out["result"] = j.Result
		if j.Result == nil {
			out["result"] = nil
		}
		return out
	}
	e := j.Error
	if e == nil {
		e = &spine.JobError{Message: string(j.Status)}
		if j.Status == spine.StatusCanceled && j.CanceledReason != "" {
			e.Message = "canceled: " + j.CanceledReason
		}
	}
	out["error"] = e
	return out
}

// finishedOutcome is outcome of the job a completion wake-up carried: the
// same answer as outcome of the job read after it.
func finishedOutcome(f spine.Finished) map[string]any {
	return outcome(spine.Job{ID: f.ID, Status: f.Status, Result: f.Result})
}
