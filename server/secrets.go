package server

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/windforce/windforce/secrets"
)

// secretBodyLimit bounds PUT …/secrets/{name}: the largest value JSON can
// spell (every byte a six-character \u escape) and a description. Larger
// bodies are refused before they are read (413); a smaller body whose
// decoded value is over secrets.MaxValueBytes is 413 too.
const secretBodyLimit = 6*secrets.MaxValueBytes + 6*4*secrets.MaxDescriptionChars + 1024

// SecretView is a secret as the API shows it (DESIGN §8): never a value.
type SecretView struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Version     int64     `json:"version"`
	UpdatedAt   time.Time `json:"updated_at"`
	UpdatedBy   string    `json:"updated_by"`
}

// ViewSecret is the API's shape of s (the console and the CLI's --json
// show the same fields).
func ViewSecret(s secrets.Secret) SecretView {
	return SecretView{Name: s.Name, Description: s.Description, Version: s.Version, UpdatedAt: s.UpdatedAt, UpdatedBy: s.UpdatedBy}
}

// SecretAuditView is one audit entry as the API shows it.
type SecretAuditView struct {
	ID      int64     `json:"id"`
	Name    string    `json:"name"`
	Action  string    `json:"action"`
	Version int64     `json:"version"`
	Actor   string    `json:"actor"`
	At      time.Time `json:"at"`
}

// secretBody is the body of PUT …/secrets/{name}.
type secretBody struct {
	Value       *string `json:"value"`
	Description string  `json:"description"`
}

// putSecret creates (201) or replaces (200) a secret as a new version and
// answers its listing shape. A bad name, an empty value or a bad
// description is 422, an oversized value 413, NUL, invalid UTF-8 or bad
// JSON 400; a refused request stores nothing and audits nothing.
func (s *Server) putSecret(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	name := r.PathValue("name")
	if err := secrets.ValidName(name); err != nil {
		return nil, secretError(err)
	}
	if s.cfg.SecretsKey.IsZero() {
		return nil, &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Err: secrets.ErrNoKey,
			Message: "this server has no secrets key (set WINDFORCE_SECRETS_KEY or WINDFORCE_SECRET)"}
	}
	if r.ContentLength > secretBodyLimit {
		return nil, secretError(secrets.ErrValueTooLarge)
	}
	var b secretBody
	if err := decodeOptional(w, r, secretBodyLimit, &b); err != nil {
		if ae := (*Error)(nil); errors.As(err, &ae) && ae.Status == http.StatusRequestEntityTooLarge {
			return nil, secretError(secrets.ErrValueTooLarge)
		}
		return nil, err
	}
	if b.Value == nil {
		return nil, &Error{Status: http.StatusUnprocessableEntity, Code: CodeInvalidInput,
			Message: "value is required", Details: map[string]any{"field": "value"}}
	}
	sec, created, err := s.cfg.Store.PutSecret(r.Context(), s.cfg.SecretsKey, secrets.Put{
		Workspace: r.PathValue("ws"), Name: name, Description: b.Description, Value: []byte(*b.Value), Actor: c.name(),
	})
	if err != nil {
		return nil, secretError(err)
	}
	if created {
		return &reply{status: http.StatusCreated, body: ViewSecret(sec)}, nil
	}
	return ViewSecret(sec), nil
}

// secretError maps the secrets package's typed refusals to their status,
// naming the field; other errors pass through to toAPIError.
func secretError(err error) error {
	status, code, field := 0, CodeInvalidInput, "value"
	switch {
	case errors.Is(err, secrets.ErrInvalidName):
		status, field = http.StatusUnprocessableEntity, "name"
	case errors.Is(err, secrets.ErrEmptyValue):
		status = http.StatusUnprocessableEntity
	case errors.Is(err, secrets.ErrInvalidDescription):
		status, field = http.StatusUnprocessableEntity, "description"
	case errors.Is(err, secrets.ErrValueTooLarge):
		status, code = http.StatusRequestEntityTooLarge, CodeTooLarge
	case errors.Is(err, secrets.ErrValueNotText):
		status, code = http.StatusBadRequest, CodeBadRequest
	default:
		return err
	}
	// The refusal's own text, without the store's "set secret: " context.
	msg := strings.TrimPrefix(publicMessage(err), "set secret: ")
	e := &Error{Status: status, Code: code, Message: msg, Err: err, Details: map[string]any{"field": field}}
	if status == http.StatusRequestEntityTooLarge {
		e.Message, e.Details["limit"] = secrets.ErrValueTooLarge.Error(), secrets.MaxValueBytes
	}
	return e
}

// listSecrets answers the workspace's secrets by name: an array of
// SecretView, never a value.
func (s *Server) listSecrets(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	list, err := s.cfg.Store.ListSecrets(r.Context(), r.PathValue("ws"))
	if err != nil {
		return nil, err
	}
	out := make([]SecretView, 0, len(list))
	for _, sec := range list {
		out = append(out, ViewSecret(sec))
	}
	return out, nil
}

// deleteSecret deletes a secret: 204, or 404 when there is none.
func (s *Server) deleteSecret(_ http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	if err := s.cfg.Store.DeleteSecret(r.Context(), r.PathValue("ws"), r.PathValue("name"), c.name()); err != nil {
		return nil, err
	}
	return &reply{status: http.StatusNoContent}, nil
}

// secretAudit answers {"entries":[…],"next_cursor"}: who created,
// replaced or deleted which version when, newest first; ?limit= (at most
// 500, default 50) and ?cursor= (a previous page's next_cursor).
func (s *Server) secretAudit(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	q := r.URL.Query()
	var before int64
	limit := 0
	if v := q.Get("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return nil, badParam("cursor", v, "want the next_cursor of a previous page")
		}
		before = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return nil, badParam("limit", v, "want 1 to 500")
		}
		limit = n
	}
	entries, next, err := s.cfg.Store.SecretAudit(r.Context(), r.PathValue("ws"), before, limit)
	if err != nil {
		return nil, err
	}
	views := make([]SecretAuditView, 0, len(entries))
	for _, e := range entries {
		views = append(views, SecretAuditView{ID: e.ID, Name: e.Name, Action: string(e.Action), Version: e.Version, Actor: e.Actor, At: e.At})
	}
	var cursor *string
	if next != 0 {
		c := strconv.FormatInt(next, 10)
		cursor = &c
	}
	return map[string]any{"entries": views, "next_cursor": cursor}, nil
}
