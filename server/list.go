package server

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// DefaultListLimit is the page size of GET …/jobs without ?limit.
const DefaultListLimit = 50

// listJobs answers GET /api/w/{ws}/jobs: {"jobs":[…],"next_cursor"} newest
// first, plus "counts" per status with ?counts=1. A bad parameter is 400
// naming it; nothing here answers a 5xx for what the client sent.
func (s *Server) listJobs(_ http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	p, err := parseListQuery(r.URL.Query())
	if err != nil {
		return nil, err
	}
	p.Workspace = r.PathValue("ws")
	want := p.Limit
	// One job more than asked says whether a next page exists, so the last
	// page carries no cursor to an empty one.
	p.Limit = min(want+1, spine.MaxListLimit)
	jobs, err := s.cfg.Store.ListJobs(r.Context(), p)
	if err != nil {
		return nil, err
	}
	var next *string
	if len(jobs) > want || (len(jobs) == want && p.Limit == want) {
		jobs = jobs[:want]
		c := encodeCursor(jobs[want-1])
		next = &c
	}
	views := make([]JobView, 0, len(jobs))
	for _, j := range jobs {
		views = append(views, ViewJob(j))
	}
	out := map[string]any{"jobs": views, "next_cursor": next}
	if flag(r.URL.Query().Get("counts")) {
		counts, err := s.cfg.Store.CountJobs(r.Context(), p.Workspace)
		if err != nil {
			return nil, err
		}
		out["counts"] = counts
	}
	return out, nil
}

// flag reads a boolean query parameter: 1, true, yes.
func flag(v string) bool {
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// parseListQuery reads status (comma list or repeated), app, action, tag,
// trigger, limit and cursor.
func parseListQuery(q url.Values) (spine.ListJobsParams, error) {
	p := spine.ListJobsParams{Limit: DefaultListLimit}
	for _, v := range q["status"] {
		for _, st := range strings.Split(v, ",") {
			st = strings.TrimSpace(st)
			if st == "" {
				continue
			}
			s := spine.Status(st)
			if s != spine.StatusQueued && s != spine.StatusRunning && !s.Terminal() {
				return p, badParam("status", st, "want queued, running, success, failure or canceled")
			}
			p.Statuses = append(p.Statuses, s)
		}
	}
	// The databases refuse NUL and invalid UTF-8 in text: a 400 here, not
	// a driver error later.
	for _, f := range []struct {
		name string
		dst  *string
	}{{"app", &p.App}, {"action", &p.Action}, {"tag", &p.Tag}} {
		v := q.Get(f.name)
		if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
			return p, badParam(f.name, v, "want UTF-8 text without NUL")
		}
		*f.dst = v
	}
	if v := q.Get("trigger"); v != "" {
		if !spine.TriggerKind(v).Valid() {
			return p, badParam("trigger", v, "want api, cli, manual, webhook, schedule, seed or child")
		}
		p.Trigger = spine.TriggerKind(v)
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > spine.MaxListLimit {
			return p, badParam("limit", v, "want an integer from 1 to "+strconv.Itoa(spine.MaxListLimit))
		}
		p.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		c, err := decodeCursor(v)
		if err != nil {
			return p, badParam("cursor", v, "want the next_cursor of a previous page")
		}
		p.After = &c
	}
	return p, nil
}

// badParam is the 400 of a query parameter, naming it.
func badParam(name, value, want string) *Error {
	e := errorf(http.StatusBadRequest, CodeBadRequest, "?%s=%q: %s", name, value, want)
	e.Details = map[string]any{"parameter": name}
	return e
}

// cursorLen is an encoded cursor's size: created_at in Unix microseconds
// (8 bytes, big endian) and the job id (16 bytes).
const cursorLen = 8 + 16

// encodeCursor is the opaque position after j: base64url of its
// created_at and id. Both databases keep microseconds, so the position
// round-trips exactly.
func encodeCursor(j spine.Job) string {
	var b [cursorLen]byte
	binary.BigEndian.PutUint64(b[:8], uint64(j.CreatedAt.UnixMicro()))
	copy(b[8:], j.ID[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// decodeCursor reads a cursor encodeCursor made.
func decodeCursor(v string) (spine.JobCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return spine.JobCursor{}, err
	}
	if len(b) != cursorLen {
		return spine.JobCursor{}, errorf(http.StatusBadRequest, CodeBadRequest, "cursor has %d bytes", len(b))
	}
	id, err := uuid.FromBytes(b[8:])
	if err != nil {
		return spine.JobCursor{}, err
	}
	at := time.UnixMicro(int64(binary.BigEndian.Uint64(b[:8]))).UTC()
	// A forged time outside what the databases store would be their error
	// (a 5xx); no job has one, so it is a bad cursor.
	if at.Year() < 1 || at.Year() > 9999 {
		return spine.JobCursor{}, errorf(http.StatusBadRequest, CodeBadRequest, "cursor time %v is out of range", at)
	}
	return spine.JobCursor{CreatedAt: at, ID: id}, nil
}
