package server_test

import (
	"encoding/json"
	"testing"
)

// TestDeliveriesRefusals: a sink's deliveries answer an empty page with
// zero counts before any event; an unknown sink is 404; a bad status,
// limit or cursor is 400 naming it; a token of no scope is 401.
func TestDeliveriesRefusals(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		e.call("POST", "/api/w/ws/event-sinks", adminToken, `{"id":"hook","kind":"webhook","url":"https://example.com/h"}`).want(201)
		var page struct {
			Deliveries []json.RawMessage `json:"deliveries"`
			NextCursor *string           `json:"next_cursor"`
			Counts     map[string]int    `json:"counts"`
		}
		r := e.call("GET", "/api/w/ws/event-sinks/hook/deliveries?counts=1", adminToken, "").want(200)
		if err := json.Unmarshal(r.body, &page); err != nil || page.Deliveries == nil || len(page.Deliveries) != 0 ||
			page.NextCursor != nil || len(page.Counts) != 3 || page.Counts["pending"] != 0 {
			t.Fatalf("deliveries of a new sink: %s (%v)", r.body, err)
		}
		if _, ok := e.call("GET", "/api/w/ws/event-sinks/hook/deliveries", adminToken, "").want(200).obj()["counts"]; ok {
			t.Fatal("counts without ?counts=1")
		}
		e.call("GET", "/api/w/ws/event-sinks/nope/deliveries", adminToken, "").wantError(404, "not_found")
		for param, q := range map[string]string{"status": "status=done", "limit": "limit=501", "cursor": "cursor=x"} {
			if d := e.call("GET", "/api/w/ws/event-sinks/hook/deliveries?"+q, adminToken, "").wantError(400, "bad_request"); d["parameter"] != param {
				t.Fatalf("?%s: details %v", q, d)
			}
		}
		e.call("GET", "/api/w/ws/event-sinks/hook/deliveries", "", "").wantError(401, "unauthorized")
	})
}
