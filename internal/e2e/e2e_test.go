package e2e_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestHelloEndToEnd syncs examples/hello from a real git remote and runs
// its actions with a real worker, runner and bun, on both pairings.
func TestHelloEndToEnd(t *testing.T) {
	t.Parallel()
	bun := requireBun(t)
	forEachPairing(t, func(t *testing.T, w *world) {
		commit := syncHello(t, w)
		w.startWorker(t, bun)
		t.Run("greet", func(t *testing.T) { t.Parallel(); testGreet(t, w, commit) })
		t.Run("fail", func(t *testing.T) { t.Parallel(); testFail(t, w) })
		t.Run("invalid input", func(t *testing.T) { t.Parallel(); testInvalidInput(t, w) })
		t.Run("cancel", func(t *testing.T) { t.Parallel(); testCancel(t, w) })
	})
}

// syncHello adds the remote as a source, syncs it and checks the catalog
// lists app hello at the pushed commit with its three actions.
func syncHello(t *testing.T, w *world) string {
	t.Helper()
	url, commit := helloRemote(t)
	sy := &source.Syncer{Catalog: w.db, Cache: w.cache, Logger: quietLogger(), AnyFileSource: true}
	if err := sy.AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "hello", URL: url, Branch: "main"}); err != nil {
		t.Fatalf("add source: %v", err)
	}
	res, err := sy.Sync(t.Context(), ws, "hello")
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	if res.Commit != commit {
		t.Fatalf("sync took commit %.12s, pushed %.12s", res.Commit, commit)
	}
	app, err := w.db.GetApp(t.Context(), ws, "hello")
	if err != nil {
		t.Fatalf("catalog after sync: %v", err)
	}
	if app.CommitSHA != commit || app.SourceID != "hello" || app.Runtime != "bun" || app.Entrypoint != "src/main.ts" {
		t.Fatalf("app hello = %+v, want commit %.12s, source hello, bun, src/main.ts", app, commit)
	}
	var keys []string
	for _, a := range app.Actions {
		keys = append(keys, a.Key)
	}
	if want := []string{"fail", "greet", "sleep"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("actions of hello = %v, want %v", keys, want)
	}
	return commit
}

// testGreet: hello/greet {"name":"Ada"} succeeds with the greeting, pinned
// to the synced commit, and its output reaches the job's logs.
func testGreet(t *testing.T, w *world, commit string) {
	id := w.enqueue(t, "greet", `{"name":"Ada"}`)
	j := w.waitTerminal(t, id, 30*time.Second)
	if j.Status != spine.StatusSuccess {
		t.Fatalf("greet ended %s (error %+v); logs:\n%s", j.Status, j.Error, w.logs(t, id))
	}
	var got map[string]any
	if err := json.Unmarshal(j.Result, &got); err != nil {
		t.Fatalf("greet result %s: %v", j.Result, err)
	}
	if want := map[string]any{"greeting": "Hello, Ada!"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("greet result = %s, want {\"greeting\":\"Hello, Ada!\"}", j.Result)
	}
	if j.TriggerKind != spine.TriggerAPI || j.Pin.CommitSHA != commit || j.Pin.AppKey != "hello" || j.Pin.ActionKey != "greet" {
		t.Fatalf("greet job trigger %s, pin %+v; want api, hello/greet at %.12s", j.TriggerKind, j.Pin, commit)
	}
	if logs := w.logs(t, id); !strings.Contains(logs, "greeting Ada") {
		t.Fatalf("greet logs do not contain %q:\n%s", "greeting Ada", logs)
	}
}

// testFail: hello/fail {} throws on every attempt; its retry policy
// (max_attempts 2) is spent, then the job fails with the thrown message.
func testFail(t *testing.T, w *world) {
	id := w.enqueue(t, "fail", `{}`)
	j := w.waitTerminal(t, id, 30*time.Second)
	if j.Status != spine.StatusFailure {
		t.Fatalf("fail ended %s, want failure; logs:\n%s", j.Status, w.logs(t, id))
	}
	if j.Pin.Retry.MaxAttempts != 2 {
		t.Fatalf("fail pinned retry %+v, want max_attempts 2 from windforce.yaml", j.Pin.Retry)
	}
	if j.Attempt != 2 {
		t.Fatalf("fail finished at attempt %d, want 2 (its retry policy's attempts)", j.Attempt)
	}
	if j.Error == nil || !strings.Contains(j.Error.Message, "failing on purpose (attempt 2)") {
		t.Fatalf("fail error = %+v, want the thrown message %q", j.Error, "failing on purpose (attempt 2)")
	}
}

// testInvalidInput: hello/greet {"name": 42} is refused by the one enqueue
// path with the typed error pointing at /name, and writes no job.
func testInvalidInput(t *testing.T, w *world) {
	id := uuid.Must(uuid.NewV7())
	_, err := w.db.EnqueueAction(t.Context(), catalog.EnqueueRequest{ID: id, Workspace: ws, App: "hello",
		Action: "greet", TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{"name": 42}`)})
	var ie *catalog.InputError
	if !errors.As(err, &ie) || !errors.Is(err, catalog.ErrInvalidInput) {
		t.Fatalf("enqueue greet {\"name\": 42}: err = %v, want *catalog.InputError", err)
	}
	found := false
	for _, f := range ie.Fields {
		found = found || f.Pointer == "/name"
	}
	if !found {
		t.Fatalf("input error fields %+v, want one at JSON pointer /name", ie.Fields)
	}
	if j, err := w.db.GetJob(t.Context(), ws, id); !errors.Is(err, spine.ErrNotFound) {
		t.Fatalf("refused enqueue wrote a job: %+v (err %v)", j, err)
	}
}

// testCancel: hello/sleep {"seconds":30} is canceled with Store.Cancel while
// running; the worker sees the mark, kills bun and completes it canceled.
func testCancel(t *testing.T, w *world) {
	id := w.enqueue(t, "sleep", `{"seconds":30}`)
	w.waitLogs(t, id, "sleeping 30s", 20*time.Second)
	out, err := w.db.Cancel(t.Context(), spine.CancelParams{Workspace: ws, JobID: id, By: "e2e", Reason: "test cancel"})
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if out.Status != spine.StatusRunning {
		t.Fatalf("cancel of a running job answered %s, want running (marked)", out.Status)
	}
	j := w.waitTerminal(t, id, 5*time.Second)
	if j.Status != spine.StatusCanceled || j.CanceledBy != "e2e" || j.CanceledReason != "test cancel" {
		t.Fatalf("sleep ended %s (by %q, reason %q), want canceled by e2e", j.Status, j.CanceledBy, j.CanceledReason)
	}
}
