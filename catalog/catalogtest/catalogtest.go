// Package catalogtest is the conformance suite of catalog.Store: sources,
// sync application, and the self-pinning enqueue path, the same on
// Postgres and on SQLite.
//
//	func TestCatalogConformance(t *testing.T) {
//		catalogtest.Run(t, func(t *testing.T) catalogtest.Store { return newMigratedStore(t) })
//	}
package catalogtest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// Store is a database store with both the catalog and the spine.
type Store interface {
	catalog.Store
	spine.Store
}

// Run runs the suite; newStore returns a fresh, migrated, isolated store
// closed at cleanup.
func Run(t *testing.T, newStore func(t *testing.T) Store) {
	t.Run("Sources", func(t *testing.T) { testSources(t, newStore) })
	t.Run("ApplySync", func(t *testing.T) { testApplySync(t, newStore) })
	t.Run("ApplySyncConflict", func(t *testing.T) { testConflict(t, newStore) })
	t.Run("SelfPin", func(t *testing.T) { testSelfPin(t, newStore) })
	t.Run("Inherit", func(t *testing.T) { testInherit(t, newStore) })
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, newStore) })
	t.Run("InvalidInput", func(t *testing.T) { testInvalidInput(t, newStore) })
	t.Run("PassThrough", func(t *testing.T) { testPassThrough(t, newStore) })
	t.Run("ApplySyncAtomic", func(t *testing.T) { testApplyAtomic(t, newStore) })
	t.Run("PinDuringSync", func(t *testing.T) { testPinDuringSync(t, newStore) })
	t.Run("Limits", func(t *testing.T) { testLimits(t, newStore) })
	t.Run("AppCommits", func(t *testing.T) { testAppCommits(t, newStore) })
}

const (
	ws      = "ws-cat"
	srcID   = "main"
	commitA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	commitB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func setup(t *testing.T, newStore func(t *testing.T) Store) Store {
	t.Helper()
	s := newStore(t)
	if err := s.PutSource(t.Context(), catalog.Source{Workspace: ws, ID: srcID, URL: "file:///repo.git", Branch: "main"}); err != nil {
		t.Fatalf("put source: %v", err)
	}
	return s
}

var (
	schemaA = json.RawMessage(`{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}`)
	schemaB = json.RawMessage(`{"type":"object","required":["name","lang"],"properties":{"name":{"type":"string"},"lang":{"type":"string"}}}`)
	outA    = json.RawMessage(`{"type":"object"}`)
	retry3  = &spine.RetryPolicy{MaxAttempts: 3, Backoff: 2 * time.Second, Factor: 4}
	// appLimits are hello's limits; greet overrides cpu at A, memory at B.
	appLimits = spine.Limits{Memory: 512 << 20, Pids: 256}
	// appEnv is hello's env; greet adds GREETING at A and replaces REGION
	// at B. hello is warm; greet is cold at B.
	appEnv = []spine.EnvVar{{Name: "REGION", Value: "eu-west-1"}, {Name: "TOKEN", Secret: "slack_token"}}
)

// appAt is the hello app at commit A (or B with the changes a redeploy
// makes: schema, timeout, tag, limits, env and warm).
func appAt(commit string) catalog.App {
	app := catalog.App{
		Key: "hello", Entrypoint: "src/main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
		Retry: spine.DefaultRetry, Limits: appLimits, Env: appEnv, Warm: &spine.DefaultWarm,
		Actions: []catalog.Action{
			{Key: "greet", InputSchema: schemaA, OutputSchema: outA, Timeout: 10 * time.Second, Retry: retry3,
				Limits: spine.Limits{CPU: 0.5}, Env: []spine.EnvVar{{Name: "GREETING", Value: "hi"}}},
			{Key: "sleep"},
		},
	}
	if commit == commitB {
		app.Actions[0].InputSchema = schemaB
		app.Actions[0].Timeout = 20 * time.Second
		app.Actions[0].Tag = "gpu"
		app.Actions[0].Limits = spine.Limits{Memory: 1 << 30}
		app.Actions[0].Env = []spine.EnvVar{{Name: "REGION", Secret: "region"}}
		app.Actions[0].Warm = catalog.Cold()
	}
	return app
}

func apply(t *testing.T, s Store, commit string, apps ...catalog.App) {
	t.Helper()
	if err := s.ApplySync(t.Context(), catalog.SyncParams{Workspace: ws, SourceID: srcID, Commit: commit, Apps: apps}); err != nil {
		t.Fatalf("apply sync %s: %v", commit, err)
	}
}

func sameJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if len(got) > 0 {
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if len(want) > 0 {
		_ = json.Unmarshal(want, &w)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s = %s, want %s", what, got, want)
	}
}

func testSources(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	src, err := s.GetSource(ctx, ws, srcID)
	if err != nil || src.URL != "file:///repo.git" || src.Branch != "main" || src.Commit != "" || src.SyncedAt != nil {
		t.Fatalf("new source = %+v, %v", src, err)
	}
	if _, err := s.GetSource(ctx, ws, "nope"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("unknown source: %v; want ErrNotFound", err)
	}
	if err := s.RecordSyncError(ctx, ws, srcID, "windforce.yaml: bad"); err != nil {
		t.Fatalf("record sync error: %v", err)
	}
	if src, _ = s.GetSource(ctx, ws, srcID); src.Error != "windforce.yaml: bad" || src.ErrorAt == nil {
		t.Fatalf("after error: %+v", src)
	}
	apply(t, s, commitA, appAt(commitA))
	if src, _ = s.GetSource(ctx, ws, srcID); src.Error != "" || src.Commit != commitA || src.SyncedAt == nil {
		t.Fatalf("after sync: %+v", src)
	}
	// Changing URL and branch keeps the sync state.
	if err := s.PutSource(ctx, catalog.Source{Workspace: ws, ID: srcID, URL: "https://example.com/r.git", Branch: "prod"}); err != nil {
		t.Fatal(err)
	}
	if src, _ = s.GetSource(ctx, ws, srcID); src.URL != "https://example.com/r.git" || src.Branch != "prod" || src.Commit != commitA {
		t.Fatalf("after update: %+v", src)
	}
	if err := s.PutSource(ctx, catalog.Source{Workspace: "ws-other", ID: "x", URL: "file:///x", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	mine, _ := s.ListSources(ctx, ws)
	all, err := s.ListSources(ctx, "")
	if err != nil || len(mine) != 1 || len(all) != 2 || all[0].Workspace != "ws-cat" || all[1].Workspace != "ws-other" {
		t.Fatalf("list sources: %d in ws, %+v all, %v", len(mine), all, err)
	}
	unlock, err := s.LockSource(ctx, ws, srcID)
	if err != nil {
		t.Fatalf("lock source: %v", err)
	}
	unlock()
}

func testApplySync(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	other := catalog.App{Key: "other", Entrypoint: "o.py", Runtime: "python", Timeout: time.Hour, Tag: "py",
		Retry: spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Second, Factor: 1}, Actions: []catalog.Action{{Key: "run"}}}
	apply(t, s, commitA, appAt(commitA), other)
	apps, err := s.ListApps(ctx, ws)
	if err != nil || len(apps) != 2 {
		t.Fatalf("list apps: %+v, %v", apps, err)
	}
	h := apps[0]
	if h.Key != "hello" || h.SourceID != srcID || h.CommitSHA != commitA || h.Entrypoint != "src/main.ts" ||
		h.Runtime != "bun" || h.Timeout != time.Minute || h.Tag != "default" || h.Retry != spine.DefaultRetry || h.Workspace != ws ||
		h.Limits != appLimits || !reflect.DeepEqual(h.Env, appEnv) || !reflect.DeepEqual(h.Warm, &spine.DefaultWarm) {
		t.Fatalf("app = %+v", h)
	}
	if len(h.Actions) != 2 || h.Actions[0].Key != "greet" || h.Actions[1].Key != "sleep" {
		t.Fatalf("actions = %+v", h.Actions)
	}
	g := h.Actions[0]
	sameJSON(t, "input schema", g.InputSchema, schemaA)
	sameJSON(t, "output schema", g.OutputSchema, outA)
	if g.Timeout != 10*time.Second || g.Tag != "" || g.Retry == nil || *g.Retry != *retry3 || g.Limits != (spine.Limits{CPU: 0.5}) {
		t.Fatalf("greet = %+v retry %v", g, g.Retry)
	}
	if sl := h.Actions[1]; sl.InputSchema != nil || sl.Timeout != 0 || sl.Tag != "" || sl.Retry != nil || sl.Limits != (spine.Limits{}) {
		t.Fatalf("sleep has overrides: %+v", sl)
	}
	if o := apps[1]; o.Retry.Factor != 1 || o.Tag != "py" || o.Timeout != time.Hour || o.Limits != (spine.Limits{}) || o.Env != nil || o.Warm != nil {
		t.Fatalf("other = %+v", o)
	}

	// Commit B drops the app "other" and the action "sleep".
	b := appAt(commitB)
	b.Actions = b.Actions[:1]
	apply(t, s, commitB, b)
	apps, _ = s.ListApps(ctx, ws)
	if len(apps) != 1 || apps[0].CommitSHA != commitB || len(apps[0].Actions) != 1 || apps[0].Actions[0].Tag != "gpu" {
		t.Fatalf("after commit B: %+v", apps)
	}
	if _, err := s.GetApp(ctx, ws, "other"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("removed app: %v; want ErrNotFound", err)
	}
	got, err := s.GetApp(ctx, ws, "hello")
	if err != nil || got.CommitSHA != commitB {
		t.Fatalf("get app: %+v, %v", got, err)
	}
	err = s.ApplySync(ctx, catalog.SyncParams{Workspace: ws, SourceID: "nope", Commit: commitA, Apps: []catalog.App{appAt(commitA)}})
	if !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("apply to unknown source: %v; want ErrNotFound", err)
	}
}

func testConflict(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	ctx := t.Context()
	apply(t, s, commitA, appAt(commitA))
	if err := s.PutSource(ctx, catalog.Source{Workspace: ws, ID: "second", URL: "file:///b.git", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	err := s.ApplySync(ctx, catalog.SyncParams{Workspace: ws, SourceID: "second", Commit: commitB, Apps: []catalog.App{appAt(commitB)}})
	if !errors.Is(err, catalog.ErrConflict) {
		t.Fatalf("second source taking app hello: %v; want ErrConflict", err)
	}
	app, _ := s.GetApp(ctx, ws, "hello")
	if app.SourceID != srcID || app.CommitSHA != commitA {
		t.Fatalf("conflict changed the catalog: %+v", app)
	}
	if src, _ := s.GetSource(ctx, ws, "second"); src.Commit != "" {
		t.Fatalf("conflicting source recorded a commit: %+v", src)
	}
}

func request(action string, input string) catalog.EnqueueRequest {
	return catalog.EnqueueRequest{
		ID: uuid.Must(uuid.NewV7()), Workspace: ws, App: "hello", Action: action,
		TriggerKind: spine.TriggerAPI, Input: json.RawMessage(input),
	}
}

func enqueue(t *testing.T, s Store, r catalog.EnqueueRequest) spine.Job {
	t.Helper()
	res, err := s.EnqueueAction(t.Context(), r)
	if err != nil {
		t.Fatalf("enqueue %s/%s: %v", r.App, r.Action, err)
	}
	j, err := s.GetJob(t.Context(), ws, res.ID)
	if err != nil {
		t.Fatalf("get job: %v", err)
	}
	return j
}

// requirePin compares a job's pin with what the catalog held.
func requirePin(t *testing.T, what string, got, want spine.Pin) {
	t.Helper()
	sameJSON(t, what+" input schema", got.InputSchema, want.InputSchema)
	sameJSON(t, what+" output schema", got.OutputSchema, want.OutputSchema)
	got.InputSchema, got.OutputSchema, want.InputSchema, want.OutputSchema = nil, nil, nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s pin =\n %+v\nwant\n %+v", what, got, want)
	}
}

// testSelfPin: a job queued at commit A keeps A's schema, timeout, tag,
// limits, env and warm after commit B is synced (and is claimed with
// them); a new job pins B.
func testSelfPin(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	apply(t, s, commitA, appAt(commitA))
	r := request("greet", `{"name":"Ada"}`)
	r.ScheduledFor = time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	queued := enqueue(t, s, r)
	wantA := spine.Pin{GitSourceID: srcID, CommitSHA: commitA, AppKey: "hello", ActionKey: "greet",
		Entrypoint: "src/main.ts", Runtime: "bun", InputSchema: schemaA, OutputSchema: outA,
		Timeout: 10 * time.Second, Tag: "default", Retry: *retry3,
		Limits: spine.Limits{Memory: 512 << 20, Pids: 256, CPU: 0.5},
		Env:    []spine.EnvVar{{Name: "GREETING", Value: "hi"}, appEnv[0], appEnv[1]}, Warm: &spine.DefaultWarm}
	requirePin(t, "job at A", queued.Pin, wantA)

	apply(t, s, commitB, appAt(commitB))
	again, err := s.GetJob(t.Context(), ws, queued.ID)
	if err != nil {
		t.Fatal(err)
	}
	requirePin(t, "queued job after sync of B", again.Pin, wantA)
	if again.Status != spine.StatusQueued || !again.ScheduledFor.Equal(r.ScheduledFor) {
		t.Fatalf("queued job = %s at %v, want queued at %v", again.Status, again.ScheduledFor, r.ScheduledFor)
	}

	// A's input no longer fits B's schema; a new job needs "lang".
	if _, err := s.EnqueueAction(t.Context(), request("greet", `{"name":"Ada"}`)); !errors.Is(err, catalog.ErrInvalidInput) {
		t.Fatalf("enqueue with A's input at B: %v; want ErrInvalidInput", err)
	}
	fresh := enqueue(t, s, request("greet", `{"name":"Ada","lang":"en"}`))
	wantB := wantA
	wantB.CommitSHA, wantB.InputSchema, wantB.Timeout, wantB.Tag = commitB, schemaB, 20*time.Second, "gpu"
	wantB.Limits = spine.Limits{Memory: 1 << 30, Pids: 256}
	wantB.Env = []spine.EnvVar{{Name: "REGION", Secret: "region"}, appEnv[1]}
	wantB.Warm = nil
	requirePin(t, "job at B", fresh.Pin, wantB)
	// The worker claims each job with its own commit's env and warm.
	claimed, err := s.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{"default", "gpu"}, Limit: 10,
		Now: r.ScheduledFor.Add(time.Minute)})
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claim: %d jobs, %v; want 2", len(claimed), err)
	}
	for _, c := range claimed {
		want := wantB
		if c.ID == queued.ID {
			want = wantA
		}
		requirePin(t, "claimed job of "+c.Pin.CommitSHA[:1], c.Pin, want)
	}
}

// testInherit: an action without overrides pins the app's values.
func testInherit(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	apply(t, s, commitA, appAt(commitA))
	j := enqueue(t, s, request("sleep", `{"seconds":1}`))
	want := spine.Pin{GitSourceID: srcID, CommitSHA: commitA, AppKey: "hello", ActionKey: "sleep",
		Entrypoint: "src/main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default", Retry: spine.DefaultRetry,
		Limits: appLimits, Env: appEnv, Warm: &spine.DefaultWarm}
	requirePin(t, "sleep", j.Pin, want)
}

// testLimits: enqueue pins the app's limits with the action's fields over
// them, and the worker's claim gets exactly those; a field neither sets
// stays unset (zero), for the worker's default.
func testLimits(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	app := catalog.App{Key: "hello", Entrypoint: "src/main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
		Retry: spine.DefaultRetry, Limits: spine.Limits{Pids: 32, CPU: 2},
		Actions: []catalog.Action{
			{Key: "all", Limits: spine.Limits{Memory: 64 << 20, Pids: 8, CPU: 0.25}},
			{Key: "memory", Limits: spine.Limits{Memory: 2 << 30}},
			{Key: "none"},
		}}
	bare := catalog.App{Key: "bare", Entrypoint: "src/main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
		Retry: spine.DefaultRetry, Actions: []catalog.Action{{Key: "run"}}}
	apply(t, s, commitA, app, bare)
	want := map[uuid.UUID]spine.Limits{}
	for action, l := range map[string]spine.Limits{
		"all":    {Memory: 64 << 20, Pids: 8, CPU: 0.25},
		"memory": {Memory: 2 << 30, Pids: 32, CPU: 2},
		"none":   {Pids: 32, CPU: 2},
	} {
		j := enqueue(t, s, request(action, `{}`))
		if j.Pin.Limits != l {
			t.Errorf("GetJob of %s: limits %+v, want %+v", action, j.Pin.Limits, l)
		}
		want[j.ID] = l
	}
	r := request("run", `{}`)
	r.App = "bare"
	j := enqueue(t, s, r)
	if j.Pin.Limits != (spine.Limits{}) {
		t.Errorf("GetJob of bare/run: limits %+v, want none", j.Pin.Limits)
	}
	want[j.ID] = spine.Limits{}
	claimed, err := s.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{"default"}, Limit: 10})
	if err != nil || len(claimed) != len(want) {
		t.Fatalf("claim: %d jobs, %v; want %d", len(claimed), err, len(want))
	}
	for _, c := range claimed {
		if c.Pin.Limits != want[c.ID] {
			t.Errorf("claimed %s/%s: limits %+v, want %+v", c.Pin.AppKey, c.Pin.ActionKey, c.Pin.Limits, want[c.ID])
		}
	}
}

// requireNoJob fails when a refused request left a job behind.
func requireNoJob(t *testing.T, s Store, id uuid.UUID) {
	t.Helper()
	if _, err := s.GetJob(t.Context(), ws, id); !errors.Is(err, spine.ErrNotFound) {
		t.Fatalf("refused request left job %s: %v", id, err)
	}
	h, err := s.Health(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range h {
		if row.Waiting+row.Scheduled+row.Running > 0 {
			t.Fatalf("refused request left a queue row: %+v", row)
		}
	}
}

func testNotFound(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	apply(t, s, commitA, appAt(commitA))
	unknownApp := request("greet", `{"name":"x"}`)
	unknownApp.App = "nope"
	otherWorkspace := request("greet", `{"name":"x"}`)
	otherWorkspace.Workspace = "elsewhere"
	for _, r := range []catalog.EnqueueRequest{unknownApp, request("nope", `{}`), otherWorkspace} {
		_, err := s.EnqueueAction(t.Context(), r)
		if !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("enqueue %s/%s/%s: %v; want ErrNotFound", r.Workspace, r.App, r.Action, err)
		}
		requireNoJob(t, s, r.ID)
	}
}

func testInvalidInput(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	apply(t, s, commitA, appAt(commitA))
	r := request("greet", `{"name":42}`)
	_, err := s.EnqueueAction(t.Context(), r)
	var ie *catalog.InputError
	if !errors.As(err, &ie) || !errors.Is(err, catalog.ErrInvalidInput) {
		t.Fatalf("bad input: %v; want *catalog.InputError", err)
	}
	if len(ie.Fields) != 1 || ie.Fields[0].Pointer != "/name" {
		t.Fatalf("fields = %+v; want one at /name", ie.Fields)
	}
	requireNoJob(t, s, r.ID)
	r = request("greet", `{}`)
	if _, err := s.EnqueueAction(t.Context(), r); !errors.As(err, &ie) || ie.Fields[0].Pointer != "" {
		t.Fatalf("missing property: %v", err)
	}
	requireNoJob(t, s, r.ID)
}

// testPassThrough: priority, scheduled_for, coalesce key, trigger and
// creator reach the job untouched.
func testPassThrough(t *testing.T, newStore func(t *testing.T) Store) {
	t.Parallel()
	s := setup(t, newStore)
	apply(t, s, commitA, appAt(commitA))
	r := request("sleep", `{"seconds":1}`)
	r.Priority, r.CoalesceKey, r.TriggerKind, r.TriggerRef, r.CreatedBy = 7, "k1", spine.TriggerSchedule, "sched-1", "alice"
	r.ScheduledFor = time.Now().Add(time.Minute).UTC().Truncate(time.Millisecond)
	j := enqueue(t, s, r)
	if j.Priority != 7 || j.CoalesceKey != "k1" || j.TriggerKind != spine.TriggerSchedule || j.TriggerRef != "sched-1" ||
		j.CreatedBy != "alice" || !j.ScheduledFor.Equal(r.ScheduledFor) {
		t.Fatalf("job = %+v", j)
	}
	r2 := request("sleep", `{"seconds":2}`)
	r2.CoalesceKey = "k1"
	res, err := s.EnqueueAction(t.Context(), r2)
	if err != nil || !res.Coalesced || res.ID != j.ID {
		t.Fatalf("coalesced enqueue = %+v, %v; want folded into %s", res, err, j.ID)
	}
}
