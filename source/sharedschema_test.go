package source_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// TestSharedSchemaPinnedAcrossSync: greet's input schema takes its "name"
// from schemas/common.json. A job enqueued at commit A keeps A's bundled
// definition after commit B changes only common.json and is synced: its
// pinned schema, compiled alone as enqueue and the console compile it,
// still accepts what A accepted. A new job is validated against B's.
func TestSharedSchemaPinnedAcrossSync(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r, _ := e.helloSource(t)
		r.Write(t, map[string]string{
			"schemas/greet.input.json": `{"type":"object","required":["name"],` +
				`"properties":{"name":{"$ref":"common.json#/$defs/name"}}}`,
			"schemas/common.json": `{"$defs":{"name":{"type":"string","minLength":2}}}`,
		})
		a := r.CommitPush(t, "A: greet's name from common.json")
		if res := e.sync(t); res.Commit != a {
			t.Fatalf("sync A = %+v", res)
		}

		req := catalog.EnqueueRequest{
			Workspace: ws, App: "hello", Action: "greet", TriggerKind: spine.TriggerAPI,
			Input: json.RawMessage(`{"name":"Ada"}`), ScheduledFor: time.Now().Add(time.Hour),
		}
		if _, err := e.db.EnqueueAction(t.Context(), catalog.EnqueueRequest{
			Workspace: ws, App: "hello", Action: "greet", TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{"name":"A"}`),
		}); !errors.Is(err, catalog.ErrInvalidInput) {
			t.Fatalf("a name too short for common.json at A: %v; want ErrInvalidInput", err)
		}
		queued, err := e.db.EnqueueAction(t.Context(), req)
		if err != nil {
			t.Fatalf("enqueue at A: %v", err)
		}

		// Commit B changes only the shared definition: upper-case names.
		r.Write(t, map[string]string{"schemas/common.json": `{"$defs":{"name":{"type":"string","pattern":"^[A-Z]+$"}}}`})
		b := r.CommitPush(t, "B: common.json wants upper case")
		if res := e.sync(t); res.Commit != b {
			t.Fatalf("sync B = %+v", res)
		}

		old, err := e.db.GetJob(t.Context(), ws, queued.ID)
		if err != nil {
			t.Fatal(err)
		}
		pinned := string(old.Pin.InputSchema)
		if old.Pin.CommitSHA != a || !strings.Contains(pinned, `"minLength":2`) || strings.Contains(pinned, "pattern") ||
			strings.Contains(pinned, `"common.json`) {
			t.Fatalf("queued job's pin changed or names a file: commit %.12s schema %s", old.Pin.CommitSHA, pinned)
		}
		if err := catalog.ValidateInput(old.Pin.InputSchema, json.RawMessage(`{"name":"Ada"}`)); err != nil {
			t.Fatalf("A's pinned schema refuses A's input after B: %v", err)
		}
		if err := catalog.ValidateInput(old.Pin.InputSchema, json.RawMessage(`{"name":"A"}`)); !errors.Is(err, catalog.ErrInvalidInput) {
			t.Fatalf("A's pinned schema lost common.json's minLength: %v", err)
		}

		if _, err := e.db.EnqueueAction(t.Context(), req); !errors.Is(err, catalog.ErrInvalidInput) {
			t.Fatalf("A's input at B: %v; want ErrInvalidInput from B's common.json", err)
		}
		req.Input = json.RawMessage(`{"name":"ADA"}`)
		fresh, err := e.db.EnqueueAction(t.Context(), req)
		if err != nil {
			t.Fatalf("enqueue at B: %v", err)
		}
		j, err := e.db.GetJob(t.Context(), ws, fresh.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.Pin.CommitSHA != b || !strings.Contains(string(j.Pin.InputSchema), "pattern") {
			t.Fatalf("new job pin: commit %.12s schema %s", j.Pin.CommitSHA, j.Pin.InputSchema)
		}
	})
}

// TestSharedSchemaRefusedRefs: a commit whose schema refers outside the
// tree or to the network is refused at validate, naming the file and the
// ref; the catalog stays where it was.
func TestSharedSchemaRefusedRefs(t *testing.T) {
	cases := []struct{ name, ref, want string }{
		{"outside the tree", "../../etc/defs.json", `schemas/greet.input.json: $ref "../../etc/defs.json" at /properties/name/$ref leads outside the repository`},
		{"https", "https://example.com/defs.json#/name", `schemas/greet.input.json: $ref "https://example.com/defs.json#/name" at /properties/name/$ref names the network`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, e *env) {
				r, good := e.helloSource(t)
				e.sync(t)
				r.Write(t, map[string]string{"schemas/greet.input.json": `{"type":"object","properties":{"name":{"$ref":"` + c.ref + `"}}}`})
				bad := r.CommitPush(t, "bad ref")
				_, err := e.syncer.Sync(t.Context(), ws, "main")
				var se *source.SyncError
				if !errors.As(err, &se) || se.Step != source.StepValidate || !se.UserError() || se.Commit != bad {
					t.Fatalf("sync of bad commit: %v; want a validate *SyncError", err)
				}
				if !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %q does not contain %q", err, c.want)
				}
				e.requireCatalogAt(t, good)
			})
		})
	}
}
