package drivertest

import (
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("PinEnvWarm", testPinEnvWarm)

// pinEnv is an environment with a literal, an empty literal and a secret
// reference, sorted by name as a pin holds it.
var pinEnv = []spine.EnvVar{{Name: "EMPTY"}, {Name: "REGION", Value: "eu-west-1 \"quoted\" ünï"}, {Name: "TOKEN", Secret: "slack_token"}}

// pinWarm is a warm policy other than the default.
var pinWarm = &spine.Warm{MaxJobs: 7, Idle: 90 * time.Second}

// testPinEnvWarm checks the env and warm columns of app, action and job:
// what is written reads back the same, none reads back as nil, and a
// waiting job is coalesced into only by a request with its env and warm.
func testPinEnvWarm(t *testing.T, open Open) {
	t.Run("Catalog", func(t *testing.T) { testPinCatalog(t, open) })
	t.Run("Job", func(t *testing.T) { testPinJob(t, open) })
	t.Run("Batch", func(t *testing.T) { testPinBatch(t, open) })
	t.Run("CoalesceOtherEnvWarm", func(t *testing.T) { testPinCoalesce(t, open) })
}

func testPinCatalog(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	putSource(t, ex, "one")
	app := catalog.App{Key: "envapp", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
		Retry: spine.DefaultRetry, Env: pinEnv, Warm: &spine.DefaultWarm,
		Actions: []catalog.Action{
			{Key: "cold", Warm: catalog.Cold()},
			{Key: "none"},
			{Key: "own", Env: []spine.EnvVar{{Name: "REGION", Secret: "region"}}, Warm: pinWarm},
		}}
	bare := catalog.App{Key: "bare", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
		Retry: spine.DefaultRetry, Actions: []catalog.Action{{Key: "run"}}}
	insertApps(t, ex, "one", commitA, app, bare)

	apps, actions, err := ex.CatalogListApps(ctx, catWS, "")
	if err != nil || len(apps) != 2 || len(actions) != 4 {
		t.Fatalf("CatalogListApps = %+v, %+v, %v; want two apps, four actions", apps, actions, err)
	}
	if got := apps[1]; !reflect.DeepEqual(got.Env, pinEnv) || !reflect.DeepEqual(got.Warm, &spine.DefaultWarm) {
		t.Errorf("envapp read back env %+v warm %+v, want %+v and %+v", got.Env, got.Warm, pinEnv, spine.DefaultWarm)
	}
	if got := apps[0]; got.Env != nil || got.Warm != nil {
		t.Errorf("bare read back env %+v warm %+v, want nil and nil", got.Env, got.Warm)
	}
	for i, want := range append(app.Actions, bare.Actions...) {
		row := actions[(i+1)%4] // bare's action sorts first
		if !reflect.DeepEqual(row.Action, want) {
			t.Errorf("action %s read back %+v, want %+v", want.Key, row.Action, want)
		}
	}
	for _, want := range app.Actions {
		gotApp, got, err := ex.ResolveAction(ctx, catWS, "envapp", want.Key)
		if err != nil || !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotApp.Env, pinEnv) || !reflect.DeepEqual(gotApp.Warm, &spine.DefaultWarm) {
			t.Errorf("ResolveAction(%s) = %+v (app env %+v warm %+v), %v; want %+v", want.Key, got, gotApp.Env, gotApp.Warm, err, want)
		}
	}
}

// envWarmParams is jobParams with env and warm in its pin.
func envWarmParams(t *testing.T, key string, env []spine.EnvVar, warm *spine.Warm) spine.EnqueueParams {
	t.Helper()
	p := jobParams(t, "ws", "jobs", key)
	p.Pin.Env, p.Pin.Warm = env, warm
	return p
}

// requirePinned requires job id to read back with env and warm in GetJob,
// in the job list and, when claimed is set, in its claimed form.
func requirePinned(t *testing.T, ex driver.Executor, id uuid.UUID, env []spine.EnvVar, warm *spine.Warm, claimed map[uuid.UUID]spine.ClaimedJob) {
	t.Helper()
	j, err := ex.GetJob(t.Context(), "ws", id)
	if err != nil {
		t.Fatalf("GetJob(%s): %v", id, err)
	}
	if !reflect.DeepEqual(j.Pin.Env, env) || !reflect.DeepEqual(j.Pin.Warm, warm) {
		t.Errorf("GetJob(%s): env %+v warm %+v, want %+v and %+v", id, j.Pin.Env, j.Pin.Warm, env, warm)
	}
	start := spine.JobCursor{CreatedAt: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), ID: uuid.Max}
	list, err := ex.ListJobs(t.Context(), spine.ListJobsParams{Workspace: "ws", After: &start, Limit: 100})
	if err != nil {
		t.Fatalf("ListJobs: %v", err)
	}
	found := false
	for _, l := range list {
		if l.ID == id {
			found = true
			if !reflect.DeepEqual(l.Pin.Env, env) || !reflect.DeepEqual(l.Pin.Warm, warm) {
				t.Errorf("ListJobs %s: env %+v warm %+v, want %+v and %+v", id, l.Pin.Env, l.Pin.Warm, env, warm)
			}
		}
	}
	if !found {
		t.Errorf("ListJobs does not list %s", id)
	}
	if claimed == nil {
		return
	}
	c, ok := claimed[id]
	if !ok {
		t.Fatalf("job %s was not claimed", id)
	}
	if !reflect.DeepEqual(c.Pin.Env, env) || !reflect.DeepEqual(c.Pin.Warm, warm) {
		t.Errorf("claimed %s: env %+v warm %+v, want %+v and %+v", id, c.Pin.Env, c.Pin.Warm, env, warm)
	}
}

// claimAll claims every waiting job on tag jobs.
func claimAll(t *testing.T, ex driver.Executor) map[uuid.UUID]spine.ClaimedJob {
	t.Helper()
	jobs, err := ex.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{"jobs"}, Limit: 10, Now: jobBase.Add(time.Minute)})
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	out := map[uuid.UUID]spine.ClaimedJob{}
	for _, j := range jobs {
		out[j.ID] = j
	}
	return out
}

func testPinJob(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	full := envWarmParams(t, "", pinEnv, pinWarm)
	none := envWarmParams(t, "", nil, nil)
	warmOnly := envWarmParams(t, "", nil, &spine.DefaultWarm)
	for _, p := range []spine.EnqueueParams{full, none, warmOnly} {
		mustInsert(t, ex, p)
	}
	requirePinned(t, ex, full.ID, pinEnv, pinWarm, nil)
	requirePinned(t, ex, none.ID, nil, nil, nil)
	claimed := claimAll(t, ex)
	requirePinned(t, ex, full.ID, pinEnv, pinWarm, claimed)
	requirePinned(t, ex, none.ID, nil, nil, claimed)
	requirePinned(t, ex, warmOnly.ID, nil, &spine.DefaultWarm, claimed)
}

func testPinBatch(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ps := []spine.EnqueueParams{envWarmParams(t, "", pinEnv, nil), envWarmParams(t, "", nil, pinWarm), envWarmParams(t, "", nil, nil)}
	if err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		return ex.EnqueueInsertBatch(t.Context(), ps, []string{"jobs"})
	}); err != nil {
		t.Fatalf("EnqueueInsertBatch: %v", err)
	}
	claimed := claimAll(t, ex)
	requirePinned(t, ex, ps[0].ID, pinEnv, nil, claimed)
	requirePinned(t, ex, ps[1].ID, nil, pinWarm, claimed)
	requirePinned(t, ex, ps[2].ID, nil, nil, claimed)
}

func testPinCoalesce(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	first := mustInsert(t, ex, envWarmParams(t, "k", pinEnv, pinWarm))
	other := map[string]spine.EnqueueParams{
		"no env":        envWarmParams(t, "k", nil, pinWarm),
		"another value": envWarmParams(t, "k", []spine.EnvVar{pinEnv[0], {Name: "REGION", Value: "us"}, pinEnv[2]}, pinWarm),
		"a literal for the secret": envWarmParams(t, "k",
			[]spine.EnvVar{pinEnv[0], pinEnv[1], {Name: "TOKEN", Value: "slack_token"}}, pinWarm),
		"cold":         envWarmParams(t, "k", pinEnv, nil),
		"another warm": envWarmParams(t, "k", pinEnv, &spine.Warm{MaxJobs: 7, Idle: time.Minute}),
	}
	for name, p := range other {
		if res, ok, err := ex.EnqueueCoalesce(t.Context(), p, false); err != nil || ok {
			t.Errorf("EnqueueCoalesce with %s = %+v, %v, %v; want a miss", name, res, ok, err)
		}
	}
	same := envWarmParams(t, "k", pinEnv, pinWarm)
	if released, err := ex.EnqueueCoalesceRelease(t.Context(), same); err != nil || released {
		t.Fatalf("EnqueueCoalesceRelease with the holder's env and warm = %v, %v; want nothing released", released, err)
	}
	if res, ok, err := ex.EnqueueCoalesce(t.Context(), same, false); err != nil || !ok || res.ID != first.ID {
		t.Fatalf("EnqueueCoalesce with the same env and warm = %+v, %v, %v; want folded into %s", res, ok, err, first.ID)
	}
	if released, err := ex.EnqueueCoalesceRelease(t.Context(), other["another value"]); err != nil || !released {
		t.Fatalf("EnqueueCoalesceRelease with another env = %v, %v; want the key released", released, err)
	}
}
