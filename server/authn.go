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

// name is the caller's audit identity: what job rows record as created_by
// or canceled_by and the audit as actor. A token is "token:<id>" (the
// bootstrap admin "token:admin"), never its label: the label is free text
// its creator chose, and one reading "schedule:x" or "admin" would pass
// for someone else. The label is shown beside it (JobView's *_label).
func (c *caller) name() string {
	if c.job != nil {
		return "job:" + c.job.JobID.String()
	}
	return c.token.Actor()
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
	// action is what the route does; its scope is auth.Need(action), the
	// same the console's page for that action needs. An empty action
	// leaves the check to the handler (any API token passes; job tokens
	// never do).
	action auth.Action
	job    jobAccess
	// global routes have no {ws}: only an all-workspace token passes the
	// scope check there.
	global bool
}

// authenticate finds the caller of r. Deny by default: no token, an
// unknown or revoked one, or a job token whose claim ended is 401.
func (s *Server) authenticate(r *http.Request) (*caller, error) {
	text, err := bearer(r.Header.Get("Authorization"))
	if err != nil {
		return nil, err
	}
	if s.cfg.AdminToken != "" && subtle.ConstantTimeCompare([]byte(text), []byte(s.cfg.AdminToken)) == 1 {
		admin := auth.Bootstrap("")
		return &caller{token: &admin}, nil
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

// bearer reads the token of an Authorization header. The scheme is
// matched in any case (RFC 7235: "bearer" and "BEARER" are Bearer); any
// other scheme is refused by name, so a client sending Basic learns what
// to send instead. The header's value is never echoed: a client that
// forgot the scheme would see its token in the error.
func bearer(h string) (string, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return "", errorf(http.StatusUnauthorized, CodeUnauthorized, "missing bearer token (Authorization: Bearer TOKEN)")
	}
	scheme, text, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", errorf(http.StatusUnauthorized, CodeUnauthorized,
			"unsupported Authorization scheme: the API takes only Bearer tokens (Authorization: Bearer TOKEN)")
	}
	if text = strings.TrimSpace(text); text == "" {
		return "", errorf(http.StatusUnauthorized, CodeUnauthorized, "missing bearer token (Authorization: Bearer TOKEN)")
	}
	return text, nil
}

// authorize checks that c may use rt on r. Known callers without the
// scope or workspace get 403.
func (s *Server) authorize(r *http.Request, c *caller, rt route) error {
	ws := r.PathValue("ws")
	if c.token != nil {
		if rt.action == "" { // the handler checks the workspace it acts on
			return nil
		}
		if rt.global {
			ws = auth.AllWorkspaces
		}
		if scope := auth.Need(rt.action); !c.token.Allows(ws, scope) {
			return errorf(http.StatusForbidden, CodeForbidden, "token lacks the %s scope in workspace %q", scope, ws)
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
