package server_test

import (
	"encoding/json"
	"testing"
	"time"
)

// eventsPage is GET …/events' answer.
type eventsPage struct {
	Events []struct {
		Seq         int64           `json:"seq"`
		SpecVersion string          `json:"specversion"`
		ID          string          `json:"id"`
		Source      string          `json:"source"`
		Type        string          `json:"type"`
		Subject     string          `json:"subject"`
		Time        time.Time       `json:"time"`
		Data        json.RawMessage `json:"data"`
	} `json:"events"`
	NextAfter int64 `json:"next_after"`
	More      bool  `json:"more"`
}

// events reads one page of GET /api/w/ws/events?query.
func (e *env) events(query string) eventsPage {
	e.t.Helper()
	var p eventsPage
	r := e.call("GET", "/api/w/ws/events?"+query, adminToken, "").want(200)
	if err := json.Unmarshal(r.body, &p); err != nil {
		e.t.Fatalf("events page %s: %v", r.body, err)
	}
	return p
}

// TestEventsParams: an empty outbox answers an empty page that keeps
// the asked position (also after=now: 0); bad parameters are 400 naming
// the parameter, a bad Last-Event-ID is 400 before any stream starts,
// and a request without a token is 401.
func TestEventsParams(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		for q, after := range map[string]int64{"": 0, "after=7": 7, "after=now": 0, "type=job.failed&after=3": 3} {
			if p := e.events(q); len(p.Events) != 0 || p.More || p.NextAfter != after {
				t.Fatalf("?%s on an empty outbox: %+v, want no events and next_after %d", q, p, after)
			}
		}
		for param, q := range map[string]string{
			"after": "after=-1", "limit": "limit=0", "type": "type=job.nope",
		} {
			if d := e.call("GET", "/api/w/ws/events?"+q, adminToken, "").wantError(400, "bad_request"); d["parameter"] != param {
				t.Fatalf("?%s: details %v", q, d)
			}
		}
		for _, q := range []string{"after=x", "limit=501", "after=now2"} {
			e.call("GET", "/api/w/ws/events?"+q, adminToken, "").wantError(400, "bad_request")
		}
		e.call("GET", "/api/w/ws/events?follow=1", adminToken, "", "Last-Event-ID", "x").wantError(400, "bad_request")
		e.call("GET", "/api/w/ws/events", "", "").wantError(401, "unauthorized")
	})
}
