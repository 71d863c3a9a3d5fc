package server

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// requeueRequest is the body of POST /api/w/{ws}/jobs/requeue.
type requeueRequest struct {
	App    string   `json:"app"`
	Action string   `json:"action"`
	Tag    string   `json:"tag"`
	IDs    []string `json:"ids"`
	// Limit bounds a filtered batch (1..catalog.MaxRequeueBatch, default
	// the bound); Cursor is the previous batch's next_cursor.
	Limit  int    `json:"limit"`
	Cursor string `json:"cursor"`
}

// requeuedView is one moved job: from (now canceled) and to (waiting).
type requeuedView struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// skippedView is one job left as it was, with the error code and message
// the single requeue would have answered (and the schema's fields for
// invalid_input).
type skippedView struct {
	ID     string         `json:"id"`
	Code   string         `json:"code"`
	Reason string         `json:"reason"`
	Detail map[string]any `json:"details,omitempty"`
}

// requeueJobs answers POST /api/w/{ws}/jobs/requeue: the waiting jobs of
// the body's app, action, tag and ids (at least one), each requeued as
// the single requeue does, at most catalog.MaxRequeueBatch a call.
// 200 {"requeued":[{"from","to"}],"skipped":[{"id","code","reason"}],
// "next_cursor"}: next_cursor, when not null, continues a filtered batch.
// A bad body is 400 and requeues nothing.
func (s *Server) requeueJobs(w http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	var body requeueRequest
	if err := decodeOptional(w, r, s.cfg.MaxInputBytes, &body); err != nil {
		return nil, err
	}
	f, err := body.filter(r.PathValue("ws"), c.name())
	if err != nil {
		return nil, err
	}
	b, err := s.enq.RequeueWaiting(r.Context(), s.cfg.Store, f)
	if err != nil {
		// Jobs requeued before the failure stay requeued (each is its own
		// transaction); the log names them, and calling again is safe.
		s.log.Error("bulk requeue stopped", "workspace", f.Workspace, "requeued", len(b.Requeued), "err", err)
		return nil, err
	}
	moved := make([]requeuedView, 0, len(b.Requeued))
	for _, m := range b.Requeued {
		moved = append(moved, requeuedView{From: m.From.String(), To: m.To.String()})
	}
	skipped := make([]skippedView, 0, len(b.Skipped))
	for _, sk := range b.Skipped {
		ae := toAPIError(sk.Err)
		skipped = append(skipped, skippedView{ID: sk.ID.String(), Code: ae.Code, Reason: ae.Message, Detail: ae.Details})
	}
	out := map[string]any{"requeued": moved, "skipped": skipped, "next_cursor": nil}
	if b.Next != nil {
		out["next_cursor"] = encodeCursor(spine.Job{ID: b.Next.ID, CreatedAt: b.Next.CreatedAt})
	}
	return out, nil
}

// filter checks the body and turns it into the catalog's filter; any
// mistake is a 400 naming the field, before a job is read.
func (q requeueRequest) filter(ws, actor string) (catalog.RequeueFilter, error) {
	f := catalog.RequeueFilter{Workspace: ws, App: q.App, Action: q.Action, Tag: q.Tag, Limit: q.Limit, Actor: actor}
	for name, v := range map[string]string{"app": q.App, "action": q.Action, "tag": q.Tag} {
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return f, badField(name, "want UTF-8 text without NUL")
		}
	}
	if q.IDs != nil && len(q.IDs) == 0 {
		return f, badField("ids", "an empty list names no job; leave it out to requeue by filter")
	}
	for i, v := range q.IDs {
		id, err := uuid.Parse(v)
		if err != nil {
			return f, badField("ids", fmt.Sprintf("ids[%d] = %q is not a job id", i, v))
		}
		f.IDs = append(f.IDs, id)
	}
	if q.Cursor != "" {
		c, err := decodeCursor(q.Cursor)
		if err != nil {
			return f, badField("cursor", "want the next_cursor of a previous batch")
		}
		f.After = &c
	}
	if err := f.Check(); err != nil {
		return f, &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: err.Error(), Err: err}
	}
	return f, nil
}

// badField is the 400 of a body field, naming it.
func badField(name, why string) *Error {
	e := errorf(http.StatusBadRequest, CodeBadRequest, "%s: %s", name, why)
	e.Details = map[string]any{"field": name}
	return e
}
