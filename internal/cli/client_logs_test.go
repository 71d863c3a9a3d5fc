package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeSSE serves the log stream contract (`id: seq`, `event: log`,
// `data:` lines, a final `event: end`) for job "j1": the first connection
// breaks after one event, the second one replays it (as a server that
// ignores Last-Event-ID would) and then ends the job.
type fakeSSE struct {
	mu          sync.Mutex
	connections int
	lastEventID []string
}

func (f *fakeSSE) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const base = "/api/w/default/jobs/"
	switch {
	case r.Method == http.MethodPost && r.URL.Path == base+"run/hello/greet":
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"id":"j1"}`)
	case r.URL.Path == base+"j1/result":
		fmt.Fprint(w, `{"id":"j1","status":"success","result":{"greeting":"hi"}}`)
	case r.URL.Path == base+"j1":
		fmt.Fprint(w, `{"id":"j1","status":"success","worker":"w"}`)
	case r.URL.Path == base+"j1/logs" && r.URL.Query().Get("follow") == "1":
		f.stream(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeSSE) stream(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.connections++
	n := f.connections
	f.lastEventID = append(f.lastEventID, r.Header.Get("Last-Event-ID"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	fmt.Fprint(w, ": keep-alive\n\nid: 0\nevent: log\ndata: line one\ndata: \n\n")
	if n == 1 {
		return // the connection breaks before the end event
	}
	fmt.Fprint(w, "id: 1\r\nevent: log\r\ndata: line two\r\ndata: \r\n\r\nevent: end\ndata: {\"status\":\"success\"}\n\n")
}

// TestFollowLogsSSE follows the stream across a broken connection: the
// replayed event is written once, the reconnect names the last event id,
// and the end event's status ends `jobs logs -f`.
func TestFollowLogsSSE(t *testing.T) {
	t.Parallel()
	f := &fakeSSE{}
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	var out, errOut bytes.Buffer
	err := Run(context.Background(), []string{"jobs", "logs", "j1", "-f", "--url", hs.URL}, &out, &errOut)
	if err != nil {
		t.Fatalf("jobs logs -f: %v\n%s", err, errOut.String())
	}
	if out.String() != "line one\nline two\n" {
		t.Fatalf("logs %q, want each line once", out.String())
	}
	if !strings.Contains(errOut.String(), "ended: success") {
		t.Fatalf("stderr %q", errOut.String())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.connections != 2 || f.lastEventID[0] != "" || f.lastEventID[1] != "0" {
		t.Fatalf("connections %d with Last-Event-ID %q, want 2 with \"\" then \"0\"", f.connections, f.lastEventID)
	}
}

// TestRunWaitOverSSE runs `run --wait` against the stream: logs on
// stderr, the result alone on stdout.
func TestRunWaitOverSSE(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(&fakeSSE{})
	t.Cleanup(hs.Close)
	var out, errOut bytes.Buffer
	err := Run(context.Background(), []string{"run", "hello/greet", "--wait", "--url", hs.URL}, &out, &errOut)
	if err != nil {
		t.Fatalf("run --wait: %v\n%s", err, errOut.String())
	}
	if got := obj(t, out.String()); got["greeting"] != "hi" {
		t.Fatalf("stdout %q", out.String())
	}
	if !strings.Contains(errOut.String(), "line one\nline two\n") || !strings.Contains(errOut.String(), "j1 success") {
		t.Fatalf("stderr %q", errOut.String())
	}
}

// TestReadSSE parses multi-line data, comments and a last event without
// a trailing blank line (dropped, as the format says).
func TestReadSSE(t *testing.T) {
	t.Parallel()
	in := ": hi\nid: 7\nevent: log\ndata:a\ndata: b\n\nevent: end\ndata: {}\n\nid: 9\ndata: cut"
	var got []sseEvent
	if err := readSSE(strings.NewReader(in), func(ev sseEvent) bool { got = append(got, ev); return false }); err != nil {
		t.Fatal(err)
	}
	want := []sseEvent{{id: "7", event: "log", data: "a\nb"}, {event: "end", data: "{}"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
}
