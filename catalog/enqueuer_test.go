package catalog_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// fakeEnqueueStore accepts every request but those of action "refused";
// its Requeue keeps the trigger of the job it was built with.
type fakeEnqueueStore struct {
	trigger spine.TriggerKind
}

func (f *fakeEnqueueStore) EnqueueAction(_ context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	if r.Action == "refused" {
		return spine.EnqueueResult{}, catalog.ErrInvalidInput
	}
	return spine.EnqueueResult{ID: uuid.New(), Generation: 1}, nil
}

func (f *fakeEnqueueStore) GetJob(_ context.Context, _ string, id uuid.UUID) (spine.Job, error) {
	return spine.Job{ID: id, TriggerKind: f.trigger}, nil
}

func (f *fakeEnqueueStore) Requeue(_ context.Context, _ string, id uuid.UUID, _ string) (spine.EnqueueResult, error) {
	if id == uuid.Nil {
		return spine.EnqueueResult{}, spine.ErrConflict
	}
	return spine.EnqueueResult{ID: uuid.New(), Generation: 1}, nil
}

// counts records each Count call as "trigger/workspace".
type counts []string

func (c *counts) count(trigger spine.TriggerKind, ws string) { *c = append(*c, string(trigger)+"/"+ws) }

// TestEnqueuerCountsAccepted: Enqueue, Via and Requeue count each accepted
// enqueue once, by trigger and workspace (a requeue under the new job's
// trigger); a refused one is not counted.
func TestEnqueuerCountsAccepted(t *testing.T) {
	t.Parallel()
	var got counts
	e := &catalog.Enqueuer{Store: &fakeEnqueueStore{trigger: spine.TriggerCLI}, Count: got.count}
	ctx := t.Context()
	ok := catalog.EnqueueRequest{Workspace: "w", App: "a", Action: "x", TriggerKind: spine.TriggerManual}
	if _, err := e.Enqueue(ctx, ok); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.Action = "refused"
	if _, err := e.Enqueue(ctx, bad); !errors.Is(err, catalog.ErrInvalidInput) {
		t.Fatalf("refused enqueue: %v", err)
	}
	hook := ok
	hook.TriggerKind = spine.TriggerWebhook
	if _, err := e.Via(ctx, hook, e.Store.EnqueueAction); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Via(ctx, hook, func(context.Context, catalog.EnqueueRequest) (spine.EnqueueResult, error) {
		return spine.EnqueueResult{}, spine.ErrConflict
	}); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("refused webhook: %v", err)
	}
	if _, err := e.Requeue(ctx, "w", uuid.New(), "token:admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Requeue(ctx, "w", uuid.Nil, "token:admin"); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("refused requeue: %v", err)
	}
	want := counts{"manual/w", "webhook/w", "cli/w"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("counted %v, want %v", got, want)
	}
}

// TestEnqueuerWithoutCount: a nil Count counts nothing and breaks
// nothing.
func TestEnqueuerWithoutCount(t *testing.T) {
	t.Parallel()
	e := &catalog.Enqueuer{Store: &fakeEnqueueStore{trigger: spine.TriggerCLI}}
	if _, err := e.Enqueue(t.Context(), catalog.EnqueueRequest{Action: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Requeue(t.Context(), "w", uuid.New(), ""); err != nil {
		t.Fatal(err)
	}
}
