package source_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/spine"
)

// TestSelfPinAcrossSync: a job enqueued at commit A (scheduled for later)
// keeps A's schema, timeout and tag after commit B is pushed and synced;
// a new job carries B's.
func TestSelfPinAcrossSync(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r, a := e.helloSource(t)
		e.sync(t)

		req := catalog.EnqueueRequest{
			Workspace: ws, App: "hello", Action: "greet", TriggerKind: spine.TriggerAPI,
			Input: json.RawMessage(`{"name":"Ada"}`), ScheduledFor: time.Now().Add(time.Hour),
		}
		queued, err := e.db.EnqueueAction(t.Context(), req)
		if err != nil {
			t.Fatalf("enqueue at A: %v", err)
		}

		// Commit B: greet needs "lang", times out after 30s, runs on tag gpu.
		yaml := readFile(t, r, "windforce.yaml")
		yaml = strings.Replace(yaml, "        timeout: 10s\n", "        timeout: 30s\n        tag: gpu\n", 1)
		r.Write(t, map[string]string{
			"windforce.yaml": yaml,
			"schemas/greet.input.json": `{"type":"object","required":["name","lang"],` +
				`"properties":{"name":{"type":"string"},"lang":{"type":"string"}}}`,
		})
		b := r.CommitPush(t, "B")
		if res := e.sync(t); res.Commit != b {
			t.Fatalf("sync B = %+v", res)
		}

		old, err := e.db.GetJob(t.Context(), ws, queued.ID)
		if err != nil {
			t.Fatal(err)
		}
		if old.Pin.CommitSHA != a || old.Pin.Timeout != 10*time.Second || old.Pin.Tag != "default" ||
			strings.Contains(string(old.Pin.InputSchema), "lang") || old.Status != spine.StatusQueued {
			t.Fatalf("queued job changed with the redeploy: %+v", old.Pin)
		}
		if _, err := e.db.EnqueueAction(t.Context(), req); !errors.Is(err, catalog.ErrInvalidInput) {
			t.Fatalf("A's input at B: %v; want ErrInvalidInput", err)
		}
		req.Input = json.RawMessage(`{"name":"Ada","lang":"en"}`)
		fresh, err := e.db.EnqueueAction(t.Context(), req)
		if err != nil {
			t.Fatalf("enqueue at B: %v", err)
		}
		j, err := e.db.GetJob(t.Context(), ws, fresh.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Pin.CommitSHA != b || j.Pin.Timeout != 30*time.Second || j.Pin.Tag != "gpu" ||
			!strings.Contains(string(j.Pin.InputSchema), "lang") || j.Pin.Entrypoint != "src/main.ts" || j.Pin.Runtime != "bun" ||
			j.Pin.GitSourceID != "main" {
			t.Fatalf("new job pin = %+v", j.Pin)
		}
	})
}

func readFile(t *testing.T, r *gittest.Repo, p string) string {
	t.Helper()
	return gittest.Git(t, r.Work, "show", "HEAD:"+p)
}
