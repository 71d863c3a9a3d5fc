package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// withGreet puts hello/greet (input {"name"} required) in s's catalog.
func withGreet(t *testing.T, s *Store) *Store {
	t.Helper()
	if err := s.PutSource(t.Context(), catalog.Source{Workspace: "ws", ID: "main", URL: "file:///r.git", Branch: "main"}); err != nil {
		t.Fatal(err)
	}
	err := s.ApplySync(t.Context(), catalog.SyncParams{Workspace: "ws", SourceID: "main", Commit: strings.Repeat("c", 40),
		Apps: []catalog.App{{Key: "hello", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
			Retry: spine.DefaultRetry, Actions: []catalog.Action{{Key: "greet",
				InputSchema: json.RawMessage(`{"type":"object","required":["name"]}`)}}}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// greetHook is a signed webhook's enqueue of hello/greet with input.
func greetHook(input string) catalog.EnqueueRequest {
	return catalog.EnqueueRequest{Workspace: "ws", App: "hello", Action: "greet", TriggerKind: spine.TriggerWebhook,
		TriggerRef: "hmac", CreatedBy: "webhook", Input: json.RawMessage(input)}
}

// jobs counts the jobs of workspace ws, in any status.
func jobs(t *testing.T, s *Store) int64 {
	t.Helper()
	counts, err := s.CountJobs(t.Context(), "ws")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

// TestWebhookSecret: an action has no secret until one is put; putting
// one again rotates it; an unknown app or action is catalog.ErrNotFound
// and writes nothing.
func TestWebhookSecret(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		s = withGreet(t, s)
		ctx := t.Context()
		if _, ok, err := s.WebhookSecret(ctx, "ws", "hello", "greet"); ok || err != nil {
			t.Fatalf("secret before any put: ok %v, %v", ok, err)
		}
		for _, key := range [][2]string{{"hello", "nope"}, {"nope", "greet"}} {
			err := s.PutWebhookSecret(ctx, "ws", key[0], key[1], "whsec_x", time.Now())
			if !errors.Is(err, catalog.ErrNotFound) || !strings.Contains(err.Error(), `action "`+key[1]+`"`) {
				t.Errorf("put secret of %s/%s: %v, want catalog.ErrNotFound naming the action", key[0], key[1], err)
			}
			if _, ok, _ := s.WebhookSecret(ctx, "ws", key[0], key[1]); ok {
				t.Errorf("a secret of %s/%s was stored", key[0], key[1])
			}
		}
		if err := s.PutWebhookSecret(ctx, "other", "hello", "greet", "whsec_x", time.Now()); !errors.Is(err, catalog.ErrNotFound) {
			t.Errorf("put secret in another workspace: %v, want catalog.ErrNotFound", err)
		}
		for _, secret := range []string{"whsec_1", "whsec_2"} {
			if err := s.PutWebhookSecret(ctx, "ws", "hello", "greet", secret, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if got, ok, err := s.WebhookSecret(ctx, "ws", "hello", "greet"); got != secret || !ok || err != nil {
				t.Fatalf("secret = %q, %v, %v; want %q", got, ok, err, secret)
			}
		}
	})
}

// TestWebhookEnqueue: a signature enqueues once; its replay is
// spine.ErrConflict and enqueues nothing; a refused enqueue records
// nothing, so the same signature is accepted once the enqueue passes; a
// record seen before forgetBefore is deleted, so its signature passes
// again.
func TestWebhookEnqueue(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		s = withGreet(t, s)
		ctx := t.Context()
		t0 := time.Now().UTC().Truncate(time.Second)
		sig := strings.Repeat("ab", 32)

		if _, err := s.EnqueueWebhook(ctx, sig, t0, t0.Add(-10*time.Minute), greetHook(`{}`)); !errors.Is(err, catalog.ErrInvalidInput) {
			t.Fatalf("enqueue of an invalid input: %v, want catalog.ErrInvalidInput", err)
		}
		if _, err := s.EnqueueWebhook(ctx, sig, t0, t0.Add(-10*time.Minute), catalog.EnqueueRequest{Workspace: "ws",
			App: "hello", Action: "nope", TriggerKind: spine.TriggerWebhook}); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("enqueue of an unknown action: %v, want catalog.ErrNotFound", err)
		}
		if n := jobs(t, s); n != 0 {
			t.Fatalf("%d jobs after refused enqueues, want 0", n)
		}
		res, err := s.EnqueueWebhook(ctx, sig, t0, t0.Add(-10*time.Minute), greetHook(`{"name":"Ada"}`))
		if err != nil {
			t.Fatalf("enqueue after refused ones with the same signature: %v, want it accepted", err)
		}
		j, err := s.GetJob(ctx, "ws", res.ID)
		if err != nil || j.TriggerKind != spine.TriggerWebhook || j.TriggerRef != "hmac" || j.CreatedBy != "webhook" {
			t.Fatalf("webhook job %+v, %v", j, err)
		}

		_, err = s.EnqueueWebhook(ctx, sig, t0.Add(time.Minute), t0.Add(-9*time.Minute), greetHook(`{"name":"Ada"}`))
		if !errors.Is(err, spine.ErrConflict) || !strings.Contains(err.Error(), "already used (replay)") {
			t.Fatalf("replay: %v, want spine.ErrConflict", err)
		}
		if n := jobs(t, s); n != 1 {
			t.Fatalf("%d jobs after a replay, want 1", n)
		}
		// Forgetting is by seen_at: a record seen at t0 outlives a
		// forgetBefore of t0 itself and goes at the first one after.
		if _, err := s.EnqueueWebhook(ctx, sig, t0.Add(2*time.Minute), t0, greetHook(`{"name":"Ada"}`)); !errors.Is(err, spine.ErrConflict) {
			t.Fatalf("replay with forgetBefore = seen_at: %v, want spine.ErrConflict", err)
		}
		if _, err := s.EnqueueWebhook(ctx, sig, t0.Add(11*time.Minute), t0.Add(time.Second), greetHook(`{"name":"Ada"}`)); err != nil {
			t.Fatalf("after the record was forgotten: %v, want it accepted", err)
		}
		if n := jobs(t, s); n != 2 {
			t.Fatalf("%d jobs, want 2", n)
		}
	})
}
