package server_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// TestEventsPage: the page answers the workspace's CloudEvents after a
// seq, oldest first, each with its seq; limit pages with more and
// next_after, type filters (moving next_after past what it hides),
// after=now starts at the newest, another workspace sees none of them,
// and bad parameters are 400 naming the parameter.
func TestEventsPage(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		e.addSink(t)
		start := e.events("after=now")
		if len(start.Events) != 0 {
			t.Fatalf("after=now answered events: %+v", start)
		}
		a, b, c := e.run("greet", `{"name":"A"}`), e.run("greet", `{"name":"B"}`), e.run("greet", `{"name":"C"}`)
		// On Postgres an event shows once the transactions open at its
		// commit have ended (EventsAfter): read until the three are there.
		var p eventsPage
		waitFor(t, "the three job.queued events", func() bool {
			p = e.events("after=" + strconv.FormatInt(start.NextAfter, 10))
			return len(p.Events) >= 3
		})
		if len(p.Events) != 3 || p.More {
			t.Fatalf("after the three enqueues: %+v", p)
		}
		for i, id := range []string{a, b, c} {
			ev := p.Events[i]
			if ev.Type != "windforce.job.queued" || ev.Subject != id || ev.SpecVersion != "1.0" ||
				ev.Source != "windforce/ws" || ev.ID == "" || ev.Time.IsZero() || (i > 0 && ev.Seq <= p.Events[i-1].Seq) {
				t.Fatalf("event %d: %+v", i, ev)
			}
			var data map[string]any
			if err := json.Unmarshal(ev.Data, &data); err != nil || data["id"] != id || data["status"] != "queued" {
				t.Fatalf("event %d data %s", i, ev.Data)
			}
			if _, ok := data["input"]; ok {
				t.Fatalf("event %d data carries the input: %s", i, ev.Data)
			}
		}
		if p.NextAfter != p.Events[2].Seq {
			t.Fatalf("next_after %d, want the last seq %d", p.NextAfter, p.Events[2].Seq)
		}
		after := strconv.FormatInt(start.NextAfter, 10)
		one := e.events("limit=1&after=" + after)
		if len(one.Events) != 1 || !one.More || one.NextAfter != p.Events[0].Seq {
			t.Fatalf("limit=1: %+v", one)
		}
		rest := e.events("after=" + strconv.FormatInt(one.NextAfter, 10))
		if len(rest.Events) != 2 || rest.Events[0].Subject != b {
			t.Fatalf("the page after the first: %+v", rest)
		}
		hidden := e.events("type=job.started,windforce.job.failed&after=" + after)
		if len(hidden.Events) != 0 || hidden.NextAfter != p.Events[2].Seq {
			t.Fatalf("type=job.started: %+v, want none and next_after past the queued ones", hidden)
		}
		if now := e.events("after=now"); len(now.Events) != 0 || now.NextAfter != p.Events[2].Seq {
			t.Fatalf("after=now: %+v, want next_after %d", now, p.Events[2].Seq)
		}
		other := e.call("GET", "/api/w/other/events", adminToken, "").want(200).obj()
		if evs := other["events"].([]any); len(evs) != 0 {
			t.Fatalf("workspace other sees %d events of ws", len(evs))
		}
		for param, q := range map[string]string{
			"after": "after=-1", "limit": "limit=0", "type": "type=job.nope",
		} {
			if d := e.call("GET", "/api/w/ws/events?"+q, adminToken, "").wantError(400, "bad_request"); d["parameter"] != param {
				t.Fatalf("?%s: details %v", q, d)
			}
		}
		e.call("GET", "/api/w/ws/events", "", "").wantError(401, "unauthorized")
	})
}

// openEvents opens GET /api/w/ws/events?follow=1&query, with Last-Event-ID
// when lastID is set.
func (e *env) openEvents(t *testing.T, query, lastID string) *sseStream {
	t.Helper()
	return e.openSSE(t, "/api/w/ws/events?follow=1&"+query, lastID)
}

// nextEvent skips keepalive comments and decodes the next event's data.
func (s *sseStream) nextEvent(t *testing.T) (sseEvent, map[string]any) {
	t.Helper()
	for {
		ev := s.next(t)
		if ev.name == "comment" {
			continue
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(ev.text()), &data); err != nil {
			t.Fatalf("event %+v: data is not JSON: %v", ev, err)
		}
		return ev, data
	}
}

// followOptions make the stream's poll so slow (a minute) that only the
// wake-ups can deliver events within the tests' deadlines.
var followOptions = apitest.Options{Workspace: ws, Secret: secret, AdminToken: adminToken, MaxInputBytes: maxInput,
	FollowPoll: time.Minute}

// TestEventsFollow: the stream starts with "ready" naming where it
// starts (after=now resolved), is woken by an enqueue and by a
// completion (the poll is a minute: only wake-ups deliver in time),
// sends each event as "id: seq" and one data line of CloudEvents JSON,
// in seq order, a job's started before its succeeded; a reconnect with
// Last-Event-ID resumes after that seq.
func TestEventsFollow(t *testing.T) {
	t.Parallel()
	apitest.ForEachBackend(t, followOptions, func(t *testing.T, a *apitest.Env) {
		e := wrap(t, a)
		e.addSink(t)
		s := e.openEvents(t, "after=now", "")
		if ct := s.res.Header.Get("Content-Type"); s.res.StatusCode != 200 || ct != "text/event-stream" {
			t.Fatalf("follow answered %d %q", s.res.StatusCode, ct)
		}
		ready, body := s.nextEvent(t)
		if ready.name != "ready" || ready.id == "" || strconv.Itoa(int(body["after"].(float64))) != ready.id {
			t.Fatalf("first event %+v, want ready with its seq", ready)
		}
		id := e.run("greet", `{"name":"Ada"}`)
		queued, data := s.nextEvent(t)
		if queued.name != "" || data["type"] != "windforce.job.queued" || data["subject"] != id || queued.id != strconv.Itoa(int(data["seq"].(float64))) {
			t.Fatalf("after the enqueue: %+v", queued)
		}
		claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		l := spine.Lease{JobID: claimed[0].ID, ClaimToken: claimed[0].ClaimToken}
		if _, err := e.db.Complete(t.Context(), spine.CompleteParams{Lease: l, Result: json.RawMessage(`{"greeting":"hi"}`)}); err != nil {
			t.Fatal(err)
		}
		var got []string
		for len(got) < 2 {
			_, data := s.nextEvent(t)
			got = append(got, data["type"].(string))
		}
		if got[0] != "windforce.job.started" || got[1] != "windforce.job.succeeded" {
			t.Fatalf("after claim and complete: %v", got)
		}

		resumed := e.openEvents(t, "", queued.id)
		if r, _ := resumed.nextEvent(t); r.name != "ready" || r.id != queued.id {
			t.Fatalf("resumed stream starts with %+v, want ready at %s", r, queued.id)
		}
		for _, want := range got {
			if ev, data := resumed.nextEvent(t); data["type"] != want {
				t.Fatalf("resumed: %+v, want %s", ev, want)
			}
		}
		e.call("GET", "/api/w/ws/events?follow=1", adminToken, "", "Last-Event-ID", "x").wantError(400, "bad_request")
	})
}

// addSink gives workspace ws a sink: a workspace records its events only
// while it has one.
func (e *env) addSink(t *testing.T) {
	t.Helper()
	if _, err := e.db.(*store.Store).CreateSink(t.Context(), sink.Sink{Workspace: ws, ID: "bus", Kind: sink.KindNATS,
		URL: "nats://127.0.0.1:4222", Subject: "windforce", Enabled: true}); err != nil {
		t.Fatal(err)
	}
}
