package store

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine"
)

// secretJob is an enqueue of workspace ws whose env names secret refs
// (and one literal).
func secretJob(ws string, refs ...string) spine.EnqueueParams {
	env := []spine.EnvVar{{Name: "REGION", Value: "eu-west-1"}}
	for i, r := range refs {
		env = append(env, spine.EnvVar{Name: "S" + string(rune('A'+i)), Secret: r})
	}
	return spine.EnqueueParams{Workspace: ws, TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{}`),
		Pin: spine.Pin{AppKey: "app", ActionKey: "act", Entrypoint: "main.ts", Runtime: "bun", Tag: spine.DefaultTag,
			Timeout: time.Minute, Env: env}}
}

// putTestSecret sets secret name of ws to value.
func putTestSecret(t *testing.T, s *Store, ws, name, value string) {
	t.Helper()
	key, err := secrets.DeriveKey([]byte("store test secret, long enough to derive"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.PutSecret(t.Context(), key, secrets.Put{Workspace: ws, Name: name, Value: []byte(value), Actor: "test"}); err != nil {
		t.Fatalf("put secret %s: %v", name, err)
	}
}

// TestEnqueueMissingSecret: an enqueue whose env names a secret its
// workspace lacks is refused with a MissingSecretError naming every
// missing one, alone or in a batch, and writes no job; one whose secrets
// exist (in its own workspace) is enqueued; on both databases.
func TestEnqueueMissingSecret(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		putTestSecret(t, s, "ws", "present", "v1")
		putTestSecret(t, s, "other", "only_other", "v2")
		refused := func(what string, err error, ws string, want ...string) {
			t.Helper()
			var ms *catalog.MissingSecretError
			if !errors.As(err, &ms) || !errors.Is(err, catalog.ErrMissingSecret) || ms.Workspace != ws || !slices.Equal(ms.Names, want) {
				t.Fatalf("%s: %v; want missing secrets %q of %s", what, err, want, ws)
			}
		}
		_, err := s.Enqueue(ctx, secretJob("ws", "present", "gone_b", "gone_a", "gone_b"))
		refused("single", err, "ws", "gone_a", "gone_b")
		_, err = s.Enqueue(ctx, secretJob("ws", "only_other"))
		refused("another workspace's secret", err, "ws", "only_other")
		_, err = s.EnqueueBatch(ctx, []spine.EnqueueParams{secretJob("ws", "present"), secretJob("ws", "gone")})
		refused("batch", err, "ws", "gone")
		coalesced := secretJob("ws", "gone")
		coalesced.CoalesceKey = "k"
		_, err = s.Enqueue(ctx, coalesced)
		refused("coalesced", err, "ws", "gone")
		for _, ws := range []string{"ws", "other"} {
			if counts, err := s.CountJobs(ctx, ws); err != nil || len(counts) != 0 && counts[spine.StatusQueued] != 0 {
				t.Fatalf("jobs of %s after refusals: %v %v; want none", ws, counts, err)
			}
		}
		res, err := s.Enqueue(ctx, secretJob("ws", "present"))
		if err != nil {
			t.Fatalf("enqueue naming an existing secret: %v", err)
		}
		j, err := s.GetJob(ctx, "ws", res.ID)
		if err != nil || len(j.Pin.Env) != 2 || j.Secrets != nil {
			t.Fatalf("enqueued job %+v %v; want its env pinned and no secret received yet", j.Pin.Env, err)
		}
		if _, err := s.Enqueue(ctx, secretJob("other", "only_other")); err != nil {
			t.Fatalf("enqueue in the secret's own workspace: %v", err)
		}
	})
}

// TestScheduleTickMissingSecret: a tick whose action's env names a secret
// the workspace lacks is unrunnable like other unrunnable ticks: the tick
// moves, no job is made, the error names the secret; once the secret
// exists the next tick makes its job; on both databases.
func TestScheduleTickMissingSecret(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		if err := s.PutSource(ctx, catalog.Source{Workspace: "ws", ID: "main", URL: "file:///repo.git", Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		app := catalog.App{Key: "vault", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: spine.DefaultTag,
			Retry: spine.DefaultRetry, Env: []spine.EnvVar{{Name: "API_KEY", Secret: "api_key"}},
			Actions: []catalog.Action{{Key: "read"}}}
		if err := s.ApplySync(ctx, catalog.SyncParams{Workspace: "ws", SourceID: "main",
			Commit: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Apps: []catalog.App{app}}); err != nil {
			t.Fatal(err)
		}
		base := time.Date(2031, 3, 4, 5, 6, 0, 0, time.UTC)
		sc, err := schedule.New(schedule.Schedule{Workspace: "ws", App: "vault", Action: "read", Cron: "* * * * * *",
			Input: json.RawMessage(`{}`), Enabled: true, CreatedBy: "tester"}, base)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CreateSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
		next := sc.NextRunAt.Add(time.Second)
		fired, job, err := s.FireTick(ctx, sc, next)
		if !fired || job != uuid.Nil || !errors.Is(err, catalog.ErrMissingSecret) || !schedule.Unrunnable(err) {
			t.Fatalf("tick without the secret: fired %t, job %s, %v; want fired, no job, missing_secret", fired, job, err)
		}
		if got, err := s.GetSchedule(ctx, "ws", sc.ID); err != nil || !got.NextRunAt.Equal(next) || got.LastJobID != nil {
			t.Fatalf("after the unrunnable tick: %+v %v; want next run %s, no job", got, err, next)
		}
		putTestSecret(t, s, "ws", "api_key", "v")
		sc.NextRunAt = next
		if fired, job, err := s.FireTick(ctx, sc, next.Add(time.Second)); !fired || job == uuid.Nil || err != nil {
			t.Fatalf("tick with the secret: fired %t, job %s, %v; want a job", fired, job, err)
		}
	})
}
