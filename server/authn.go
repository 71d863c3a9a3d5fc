package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/runner/wftoken"
)

// caller is who made a request: an API token (or the bootstrap admin
// token) or a running job with its WF_TOKEN.
type caller struct {
	// token is set for API tokens and the bootstrap admin token.
	token *auth.Token
	// job is set for a WF_TOKEN: the job that runs and may read itself
	// and enqueue children in its workspace.
	job *wftoken.Claims
}

// name is what the job rows record as created_by or canceled_by.
func (c *caller) name() string {
	if c.job != nil {
		return "job:" + c.job.JobID.String()
	}
	if c.token.Label != "" {
		return c.token.Label
	}
	return "token:" + c.token.ID
}

// jobAccess says what a WF_TOKEN may do on a route; API tokens ignore it.
type jobAccess int

const (
	// jobNone: a job token is refused.
	jobNone jobAccess = iota
	// jobSelf: allowed when the path's {id} is the token's own job.
	jobSelf
	// jobChild: allowed in the token's workspace, enqueued as a child.
	jobChild
)

// route is what a path requires of its caller.
type route struct {
	scope auth.Scope
	job   jobAccess
	// global routes have no {ws}: only an all-workspace token passes the
	// scope check there. An empty scope leaves the check to the handler
	// (any API token passes; job tokens never do).
	global bool
}

// authenticate finds the caller of r. Deny by default: no token, an
// unknown or revoked one, or a job token whose claim ended is 401.
func (s *Server) authenticate(r *http.Request) (*caller, error) {
	h := r.Header.Get("Authorization")
	text, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || strings.TrimSpace(text) == "" {
		return nil, errorf(http.StatusUnauthorized, CodeUnauthorized, "missing bearer token (Authorization: Bearer TOKEN)")
	}
	text = strings.TrimSpace(text)
	if s.cfg.AdminToken != "" && subtle.ConstantTimeCompare([]byte(text), []byte(s.cfg.AdminToken)) == 1 {
		return &caller{token: &auth.Token{ID: "admin", Label: "admin", Workspace: auth.AllWorkspaces,
			Scopes: []auth.Scope{auth.ScopeRead, auth.ScopeRun, auth.ScopeAdmin, auth.ScopeOperator}}}, nil
	}
	if strings.HasPrefix(text, "wf1.") {
		claims, err := wftoken.Verify(s.cfg.Secret, text, s.now())
		if err != nil {
			return nil, &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: "job token refused", Err: err}
		}
		return &caller{job: &claims}, nil
	}
	tok, err := s.cfg.Store.TokenByHash(r.Context(), auth.Hash(text))
	if errors.Is(err, auth.ErrNotFound) {
		return nil, errorf(http.StatusUnauthorized, CodeUnauthorized, "unknown or revoked token")
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate: %w", err)
	}
	return &caller{token: &tok}, nil
}

// authorize checks that c may use rt on r. Known callers without the
// scope or workspace get 403.
func (s *Server) authorize(r *http.Request, c *caller, rt route) error {
	ws := r.PathValue("ws")
	if c.token != nil {
		if rt.scope == "" { // the handler checks the workspace it acts on
			return nil
		}
		if rt.global {
			ws = auth.AllWorkspaces
		}
		if !c.token.Allows(ws, rt.scope) {
			return errorf(http.StatusForbidden, CodeForbidden, "token lacks the %s scope in workspace %q", rt.scope, ws)
		}
		return nil
	}
	if c.job.Workspace != ws {
		return errorf(http.StatusForbidden, CodeForbidden, "a job token is valid only in its own workspace")
	}
	switch rt.job {
	case jobSelf:
		if id, err := uuid.Parse(r.PathValue("id")); err != nil || id != c.job.JobID {
			return errorf(http.StatusForbidden, CodeForbidden, "a job token may read only its own job")
		}
	case jobChild:
	default:
		return errorf(http.StatusForbidden, CodeForbidden, "a job token may only read its own job and enqueue child jobs")
	}
	return s.checkLive(r, c.job)
}

// checkLive refuses a job token once its claim ended: the job must still
// be running under the token's claim token (job_queue's live lease). A
// token of an earlier claim of a job that runs again is refused too.
func (s *Server) checkLive(r *http.Request, claims *wftoken.Claims) error {
	live, err := s.cfg.Store.LeaseLive(r.Context(), claims.Workspace, claims.JobID, claims.ClaimToken)
	if err != nil {
		return fmt.Errorf("check job token: %w", err)
	}
	if !live {
		return errorf(http.StatusUnauthorized, CodeUnauthorized, "job token refused: its claim of job %s ended", claims.JobID)
	}
	return nil
}
