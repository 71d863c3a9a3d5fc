package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// SourceView is the source shape of DESIGN §4, the one source.View that
// the source events carry too.
type SourceView = source.View

// ActionView is one action of the catalog with its schemas.
type ActionView struct {
	Action       string          `json:"action"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema"`
	Timeout      string          `json:"timeout"`
	Tag          string          `json:"tag"`
	Retry        RetryView       `json:"retry"`
	// Env and Warm are what a job of the action pins: the action's
	// variables over the app's, the action's warm policy or the app's.
	Env  EnvView   `json:"env,omitempty"`
	Warm *WarmView `json:"warm,omitempty"`
}

// RetryView is a retry policy with the backoff as duration text ("5s"),
// like every other duration of the API.
type RetryView struct {
	MaxAttempts int     `json:"max_attempts"`
	Backoff     string  `json:"backoff"`
	Factor      float64 `json:"factor"`
}

func viewRetry(p spine.RetryPolicy) RetryView {
	return RetryView{MaxAttempts: p.MaxAttempts, Backoff: p.Backoff.String(), Factor: p.Factor}
}

// AppView is one app of the catalog: where its code is, its defaults and
// its actions with the values a job of each would pin.
type AppView struct {
	App        string    `json:"app"`
	Source     string    `json:"git_source_id"`
	CommitSHA  string    `json:"commit_sha"`
	Entrypoint string    `json:"entrypoint"`
	Runtime    string    `json:"runtime"`
	Timeout    string    `json:"timeout"`
	Tag        string    `json:"tag"`
	Retry      RetryView `json:"retry"`
	// Env is the app's environment (literals and {"secret": NAME}
	// references), Warm its warm-runtime policy; absent when none.
	Env       EnvView      `json:"env,omitempty"`
	Warm      *WarmView    `json:"warm,omitempty"`
	UpdatedAt time.Time    `json:"updated_at"`
	Actions   []ActionView `json:"actions"`
}

func viewApp(a catalog.App) AppView {
	v := AppView{App: a.Key, Source: a.SourceID, CommitSHA: a.CommitSHA, Entrypoint: a.Entrypoint, Runtime: a.Runtime,
		Timeout: a.Timeout.String(), Tag: a.Tag, Retry: viewRetry(a.Retry), Env: viewEnv(a.Env), Warm: viewWarm(a.Warm),
		UpdatedAt: a.UpdatedAt, Actions: []ActionView{}}
	for _, act := range a.Actions {
		p := catalog.Pin(a, act)
		v.Actions = append(v.Actions, ActionView{Action: act.Key, InputSchema: act.InputSchema,
			OutputSchema: act.OutputSchema, Timeout: p.Timeout.String(), Tag: p.Tag, Retry: viewRetry(p.Retry),
			Env: viewEnv(p.Env), Warm: viewWarm(p.Warm)})
	}
	return v
}

func viewApps(apps []catalog.App) []AppView {
	out := make([]AppView, 0, len(apps))
	for _, a := range apps {
		out = append(out, viewApp(a))
	}
	return out
}

// listSources answers {"sources":[…]}.
func (s *Server) listSources(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	srcs, err := s.cfg.Store.ListSources(r.Context(), r.PathValue("ws"))
	if err != nil {
		return nil, err
	}
	out := make([]SourceView, 0, len(srcs))
	for _, src := range srcs {
		out = append(out, source.ViewOf(src))
	}
	return map[string]any{"sources": out}, nil
}

// addSource creates (or updates) a source from {"id","url","branch",
// "hook_secret"} (no hook_secret keeps the stored one); it does not sync.
// A bad id, URL, branch or hook secret, credentials in the URL, or a
// file:// path outside WINDFORCE_FILE_SOURCES is 422, and nothing is
// stored.
func (s *Server) addSource(w http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	var body struct {
		ID         string `json:"id"`
		URL        string `json:"url"`
		Branch     string `json:"branch"`
		HookSecret string `json:"hook_secret"`
	}
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &body); err != nil {
		return nil, err
	}
	if body.Branch == "" {
		body.Branch = "main"
	}
	invalid := func(err error) error {
		return &Error{Status: http.StatusUnprocessableEntity, Code: CodeInvalidInput, Message: err.Error(), Err: err}
	}
	if strings.TrimSpace(body.ID) == "" || body.URL == "" {
		return nil, invalid(errors.New("a source needs an id and a url"))
	}
	src := catalog.Source{Workspace: r.PathValue("ws"), ID: body.ID, URL: body.URL, Branch: body.Branch, HookSecret: body.HookSecret}
	if err := s.cfg.Syncer.AddSource(r.Context(), src); err != nil {
		if re := (*source.RefusedError)(nil); errors.As(err, &re) {
			return nil, invalid(re)
		}
		return nil, fmt.Errorf("add source: %w", err)
	}
	got, err := s.cfg.Store.GetSource(r.Context(), src.Workspace, src.ID)
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: source.ViewOf(got)}, nil
}

// syncResult is {"commit","apps":[…]}; apps are the source's apps now.
func (s *Server) syncResult(r *http.Request, id string, res source.Result) (any, error) {
	// The catalog is the truth (its rows carry source, commit and times);
	// res.Apps are the parsed manifest's.
	all, err := s.cfg.Store.ListApps(r.Context(), r.PathValue("ws"))
	if err != nil {
		return nil, err
	}
	var apps []catalog.App
	for _, a := range all {
		if a.SourceID == id {
			apps = append(apps, a)
		}
	}
	return map[string]any{"commit": res.Commit, "apps": viewApps(apps), "unchanged": res.Unchanged, "ignored": res.Ignored}, nil
}

// syncSource syncs the source's branch head now: {"commit","apps"}, or 422
// with the step and reason when the source's content is at fault.
func (s *Server) syncSource(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	id := r.PathValue("id")
	res, err := s.cfg.Syncer.Sync(r.Context(), r.PathValue("ws"), id)
	if err != nil {
		return nil, err
	}
	return s.syncResult(r, id, res)
}

// hookSource handles a push hook called with a bearer token: {"ref"} (a
// GitHub or Gitea push payload carries it too); a push to another branch
// is ignored. Git hosts' signed calls are hookFromHost's (hook.go).
func (s *Server) hookSource(w http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	data, err := readBody(w, r, s.cfg.MaxInputBytes)
	if err != nil {
		return nil, err
	}
	var body struct {
		Ref string `json:"ref"`
	}
	if strings.TrimSpace(string(data)) != "" {
		if err := checkJSON(data); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &body); err != nil {
			return nil, errorf(http.StatusBadRequest, CodeBadRequest, "push hook body: %v", err)
		}
	}
	id := r.PathValue("id")
	res, err := s.cfg.Syncer.Hook(r.Context(), r.PathValue("ws"), id, body.Ref)
	if err != nil {
		return nil, err
	}
	return s.syncResult(r, id, res)
}

// listApps answers {"apps":[…]} with actions and schemas.
func (s *Server) listApps(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	apps, err := s.cfg.Store.ListApps(r.Context(), r.PathValue("ws"))
	if err != nil {
		return nil, err
	}
	return map[string]any{"apps": viewApps(apps)}, nil
}

// getApp answers one app with its actions; 404 when unknown.
func (s *Server) getApp(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	a, err := s.cfg.Store.GetApp(r.Context(), r.PathValue("ws"), r.PathValue("app"))
	if err != nil {
		return nil, err
	}
	return viewApp(a), nil
}
