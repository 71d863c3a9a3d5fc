package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeEvents serves the live events contract (docs/API.md): "ready" with
// the start seq, then "id: seq" + CloudEvents data. The first connection
// breaks after one event; the second replays it (as a server that
// ignored ?after would) and sends the next.
type fakeEvents struct {
	mu     sync.Mutex
	afters []string
	types  []string
	second chan struct{} // closed when the second connection has sent all
}

func (f *fakeEvents) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/w/default/events" || r.URL.Query().Get("follow") != "1" {
		http.NotFound(w, r)
		return
	}
	f.mu.Lock()
	f.afters = append(f.afters, r.URL.Query().Get("after"))
	f.types = append(f.types, r.URL.Query().Get("type"))
	n := len(f.afters)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(seq int, typ, subject string) string {
		return fmt.Sprintf("id: %d\ndata: {\"specversion\":\"1.0\",\"id\":\"e%d\",\"seq\":%d,\"type\":\"windforce.%s\",\"subject\":\"%s\","+
			"\"time\":\"2026-12-01T16:00:00Z\",\"data\":{\"app\":\"hello\",\"action\":\"greet\",\"status\":\"queued\"}}\n\n", seq, seq, seq, typ, subject)
	}
	if n == 1 {
		fmt.Fprint(w, "id: 41\nevent: ready\ndata: {\"after\":41}\n\n: keepalive\n\n"+ev(42, "job.queued", "j1"))
		return // the connection breaks
	}
	fmt.Fprint(w, "id: 42\nevent: ready\ndata: {\"after\":42}\n\n"+ev(42, "job.queued", "j1")+ev(43, "job.started", "j1"))
	w.(http.Flusher).Flush()
	close(f.second)
	<-r.Context().Done()
}

// TestEventsTailReconnects: tail starts at "now", prints one line per
// event, reconnects after a break with ?after= the last seq printed, and
// prints a replayed event once; --json prints the CloudEvents.
func TestEventsTailReconnects(t *testing.T) {
	t.Parallel()
	for _, asJSON := range []bool{false, true} {
		f := &fakeEvents{second: make(chan struct{})}
		hs := httptest.NewServer(f)
		ctx, cancel := context.WithCancel(context.Background())
		out := &syncBuffer{}
		done := make(chan error, 1)
		args := []string{"events", "tail", "--type", "job.queued,job.started", "--url", hs.URL}
		if asJSON {
			args = append(args, "--json")
		}
		go func() { done <- Run(ctx, args, out, &syncBuffer{}) }()
		<-f.second
		waitFor(t, "the second event", func() bool { return strings.Count(out.String(), "\n") >= 2 })
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("tail ended with %v", err)
		}
		hs.Close()
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("tail printed %q, want each event once", out.String())
		}
		if asJSON {
			if !strings.HasPrefix(lines[0], `{"specversion":"1.0","id":"e42"`) || !strings.Contains(lines[1], `"seq":43`) {
				t.Fatalf("--json printed %q", lines)
			}
		} else if !strings.HasPrefix(lines[0], "42  ") || !strings.Contains(lines[0], "windforce.job.queued") ||
			!strings.Contains(lines[0], "j1  hello/greet  queued") || !strings.Contains(lines[1], "windforce.job.started") {
			t.Fatalf("tail printed %q", lines)
		}
		f.mu.Lock()
		if len(f.afters) != 2 || f.afters[0] != "now" || f.afters[1] != "42" || f.types[0] != "job.queued,job.started" {
			t.Fatalf("connections asked after=%q type=%q, want now then 42", f.afters, f.types)
		}
		f.mu.Unlock()
	}
}
