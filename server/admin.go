package server

import (
	"net/http"

	"github.com/windforce/windforce/auth"
)

// tagHealthView is one row of the queue health of DESIGN §2.
type tagHealthView struct {
	Tag                  string  `json:"tag"`
	Waiting              int64   `json:"waiting"`
	Scheduled            int64   `json:"scheduled"`
	Running              int64   `json:"running"`
	Failed24h            int64   `json:"failed_24h"`
	ExpiredHeartbeats    int64   `json:"expired_heartbeats"`
	OldestWaitingSeconds float64 `json:"oldest_waiting_seconds"`
	MaxAttempt           int64   `json:"max_attempt"`
	MaxRestarts          int64   `json:"max_restarts"`
}

// queueHealth answers {"tags":[…]}, the workspace's rows of queue_health.
func (s *Server) queueHealth(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	rows, err := s.cfg.Store.Health(r.Context())
	if err != nil {
		return nil, err
	}
	out := []tagHealthView{}
	for _, h := range rows {
		if h.Workspace != r.PathValue("ws") {
			continue
		}
		out = append(out, tagHealthView{Tag: h.Tag, Waiting: h.Waiting, Scheduled: h.Scheduled, Running: h.Running,
			Failed24h: h.Failed24h, ExpiredHeartbeats: h.ExpiredHeartbeats, OldestWaitingSeconds: h.OldestWaitingAge.Seconds(),
			MaxAttempt: h.MaxAttempt, MaxRestarts: h.MaxRestarts})
	}
	return map[string]any{"tags": out}, nil
}

// createToken creates a token from {"workspace","scopes","label"} and
// answers its text once ({"token",…}). The caller needs admin in that
// workspace (a token for every workspace, "*", needs an all-workspace
// admin) and may grant only scopes it holds there itself: admin implies
// read, run and webhook but not operator, so minting operator takes an
// operator token or the bootstrap admin token.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	var body struct {
		Workspace string       `json:"workspace"`
		Scopes    []auth.Scope `json:"scopes"`
		Label     string       `json:"label"`
	}
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &body); err != nil {
		return nil, err
	}
	if !c.token.Allows(body.Workspace, auth.ScopeAdmin) {
		return nil, errorf(http.StatusForbidden, CodeForbidden, "token lacks the admin scope in workspace %q", body.Workspace)
	}
	text, tok, err := auth.NewToken(body.Workspace, body.Label, body.Scopes)
	if err != nil {
		return nil, &Error{Status: http.StatusUnprocessableEntity, Code: CodeInvalidInput, Message: err.Error(), Err: err}
	}
	if scope, lacks := c.token.Missing(tok.Workspace, tok.Scopes); lacks {
		return nil, errorf(http.StatusForbidden, CodeForbidden,
			"a token may grant only scopes it holds: this token lacks the %s scope in workspace %q (admin does not imply operator)", scope, tok.Workspace)
	}
	if err := s.cfg.Store.CreateToken(r.Context(), tok); err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: map[string]any{"token": text, "id": tok.ID,
		"workspace": tok.Workspace, "scopes": tok.Scopes, "label": tok.Label}}, nil
}

// revokeToken revokes a token by id at once (all-workspace admin only);
// the store ends the token's console sessions with it.
func (s *Server) revokeToken(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	if err := s.cfg.Store.RevokeToken(r.Context(), r.PathValue("id")); err != nil {
		return nil, err
	}
	return map[string]any{"id": r.PathValue("id"), "revoked": true}, nil
}
