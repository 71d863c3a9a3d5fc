package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/spine"
)

// sseEvent is one server-sent event as a client sees it: data lines
// joined with \n, as the SSE format says.
type sseEvent struct {
	id, name string
	data     []string
}

func (ev sseEvent) text() string { return strings.Join(ev.data, "\n") }

// sseStream is an open ?follow=1 request: its response and its events.
type sseStream struct {
	res    *http.Response
	events chan sseEvent
	// done is closed once the body has ended (the server closed the stream).
	done   chan struct{}
	cancel context.CancelFunc
}

// follow opens GET …/logs?follow=1, with Last-Event-ID when lastID is set.
func (e *env) follow(t *testing.T, id, lastID string) *sseStream {
	t.Helper()
	return e.openSSE(t, "/api/w/ws/jobs/"+id+"/logs?follow=1", lastID)
}

// openSSE opens a ?follow=1 stream at path, with Last-Event-ID when lastID
// is set, read in the background until the test ends.
func (e *env) openSSE(t *testing.T, path, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, "GET", e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &sseStream{res: res, events: make(chan sseEvent, 100), done: make(chan struct{}), cancel: cancel}
	t.Cleanup(func() { cancel(); res.Body.Close(); <-s.done })
	go s.read()
	return s
}

// read parses the body into events until it ends.
func (s *sseStream) read() {
	defer close(s.done)
	sc := bufio.NewScanner(s.res.Body)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.name != "" || ev.data != nil {
				s.events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
			s.events <- sseEvent{name: "comment", data: []string{line}}
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.id = value
			case "event":
				ev.name = value
			case "data":
				ev.data = append(ev.data, value)
			}
		}
	}
}

// next waits for the next event; the stream must produce one in time.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-s.done:
		select {
		case ev := <-s.events:
			return ev
		default:
		}
		t.Fatal("the stream ended before the next event")
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30s")
	}
	return sseEvent{}
}

// untilEnd reads events until "end" and returns the log events before it
// and the end's status; the stream must then close.
func (s *sseStream) untilEnd(t *testing.T) ([]sseEvent, string) {
	t.Helper()
	var logs []sseEvent
	for {
		ev := s.next(t)
		switch ev.name {
		case "log":
			logs = append(logs, ev)
		case "end":
			var body struct{ Status string }
			if err := json.Unmarshal([]byte(ev.text()), &body); err != nil {
				t.Fatalf("end event data %q: %v", ev.text(), err)
			}
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the stream stayed open after the end event")
			}
			return logs, body.Status
		case "comment":
		default:
			t.Fatalf("unexpected event %+v", ev)
		}
	}
}

func joinLogs(evs []sseEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		b.WriteString(ev.text())
	}
	return b.String()
}

// TestFollowLogsStreams drives a job by hand through the store (claim,
// append, complete) while a client follows: chunks arrive live as events
// with their seq as id, a multi-line chunk becomes several data lines, the
// end event carries the status, and Last-Event-ID resumes after a chunk.
func TestFollowLogsStreams(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Ada"}`).want(201).obj()["id"].(string)
		e.call("GET", "/api/w/ws/jobs/"+id+"/logs?follow=1", adminToken, "", "Last-Event-ID", "x").wantError(400, "bad_request")
		e.call("GET", "/api/w/ws/jobs/"+uuid.NewString()+"/logs?follow=1", adminToken, "").wantError(404, "not_found")

		s := e.follow(t, id, "")
		if ct := s.res.Header.Get("Content-Type"); s.res.StatusCode != 200 || ct != "text/event-stream" {
			t.Fatalf("follow answered %d %q", s.res.StatusCode, ct)
		}
		claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1})
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		l := spine.Lease{JobID: claimed[0].ID, ClaimToken: claimed[0].ClaimToken}
		appendLog := func(data string) {
			if err := e.db.AppendLog(t.Context(), spine.AppendLogParams{Lease: l, Data: data}); err != nil {
				t.Fatal(err)
			}
		}
		appendLog("one\n")
		first := s.next(t)
		if first.name != "log" || first.id != "1" || first.text() != "one\n" {
			t.Fatalf("first event %+v, want log 1 \"one\\n\"", first)
		}
		appendLog("two\nthree\r\nfour")
		second := s.next(t)
		if second.id != "2" || len(second.data) != 3 || second.text() != "two\nthree\nfour" {
			t.Fatalf("multi-line chunk as %+v, want three data lines", second)
		}
		appendLog("!\n")
		if _, err := e.db.Complete(t.Context(), spine.CompleteParams{Lease: l, Result: json.RawMessage(`{"greeting":"hi"}`)}); err != nil {
			t.Fatal(err)
		}
		rest, status := s.untilEnd(t)
		if status != "success" || joinLogs(rest) != "!\n" || rest[0].id != "3" {
			t.Fatalf("after completion: %+v status %q", rest, status)
		}

		resumed, status := e.follow(t, id, "1").untilEnd(t)
		if status != "success" || joinLogs(resumed) != "two\nthree\nfour!\n" || resumed[0].id != "2" {
			t.Fatalf("resumed after 1: %+v status %q", resumed, status)
		}
		if plain := e.call("GET", "/api/w/ws/jobs/"+id+"/logs", adminToken, "").want(200); string(plain.body) != "one\ntwo\nthree\r\nfour!\n" {
			t.Fatalf("plain logs %q", plain.body)
		}
	})
}

// TestFollowLogsClientGone: a client that disconnects from a job that
// never ends releases its handler (the test server's Close waits for it).
func TestFollowLogsClientGone(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"Ada"}`).want(201).obj()["id"].(string)
		s := e.follow(t, id, "")
		if s.res.StatusCode != 200 {
			t.Fatalf("follow answered %d", s.res.StatusCode)
		}
		s.cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Fatal("the client's stream did not end after cancel")
		}
	})
}

// talkApp is a python app deployed beside hello: it prints a line, waits
// for the gate file its input names, then prints two more lines.
const talkApp = `
  talk:
    entrypoint: talk/main.py
    runtime: python
    timeout: 60s
    tag: default
    actions:
      talk: {}
`

const talkMain = `import os, sys, time

def main(input, ctx):
    print("first line", flush=True)
    deadline = time.time() + 30
    while not os.path.exists(input["gate"]):
        if time.time() > deadline:
            raise RuntimeError("the gate never opened")
        time.sleep(0.02)
    print("second line\nthird line", flush=True)
    return {"ok": True}
`

// TestFollowLogsWithWorker follows a job a real worker runs: the first
// line arrives while the job is still running, the rest after, then the
// end event; a second client resumes from the first event's id.
func TestFollowLogsWithWorker(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		manifest, err := os.ReadFile(filepath.Join("..", "examples", "hello", "windforce.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		e.deploy("hello", map[string]string{"windforce.yaml": string(manifest) + talkApp, "talk/main.py": talkMain}).want(200)
		shared := t.TempDir() // the gate is seen by the sandboxed job here
		if err := os.Chmod(shared, 0o755); err != nil {
			t.Fatal(err)
		}
		apitest.StartWorker(t, e.api, "python", apitest.WorkerOptions{Shared: []string{shared}})
		gate := filepath.Join(shared, "gate")
		input, _ := json.Marshal(map[string]string{"gate": gate})
		id := e.call("POST", "/api/w/ws/jobs/run/talk/talk", adminToken, string(input)).want(201).obj()["id"].(string)

		s := e.follow(t, id, "")
		first := s.next(t)
		if first.name != "log" || !strings.Contains(first.text(), "first line") || strings.Contains(first.text(), "second") {
			t.Fatalf("first event %+v", first)
		}
		if j := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(200).obj(); j["status"] != "running" {
			t.Fatalf("job while the first line streamed: %v", j)
		}
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		rest, status := s.untilEnd(t)
		if status != "success" {
			t.Fatalf("end status %q (logs %q)", status, joinLogs(rest))
		}
		all := first.text() + joinLogs(rest)
		if !strings.Contains(all, "second line\nthird line") {
			t.Fatalf("streamed logs %q", all)
		}
		plain := e.call("GET", "/api/w/ws/jobs/"+id+"/logs", adminToken, "").want(200)
		if string(plain.body) != all {
			t.Fatalf("streamed %q, plain logs %q", all, plain.body)
		}
		resumed, status := e.follow(t, id, first.id).untilEnd(t)
		if status != "success" || joinLogs(resumed) != joinLogs(rest) {
			t.Fatalf("resumed after %s: %q status %q, want %q", first.id, joinLogs(resumed), status, joinLogs(rest))
		}
	})
}

// TestFollowLogsEndsWhenTokenRevoked: revocation takes effect at once,
// also for a log stream already open: the stream of a job that never ends
// closes soon after its token is revoked, without an end event.
func TestFollowLogsEndsWhenTokenRevoked(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		tok := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["read","run"],"label":"stream"}`).want(http.StatusCreated).obj()
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", tok["token"].(string), `{"name":"Ada"}`).want(http.StatusCreated).obj()["id"].(string)
		req, err := http.NewRequestWithContext(t.Context(), "GET", e.url+"/api/w/ws/jobs/"+id+"/logs?follow=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok["token"].(string))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("follow answered %d", res.StatusCode)
		}
		e.call("DELETE", "/api/tokens/"+tok["id"].(string), adminToken, "").want(http.StatusOK)
		body := make(chan string, 1)
		go func() { b, _ := io.ReadAll(res.Body); body <- string(b) }()
		select {
		case b := <-body:
			if strings.Contains(b, "event: end") {
				t.Fatalf("the stream ended as if the job had finished:\n%s", b)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("the stream of a revoked token is still open after 15s")
		}
	})
}
