package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

const ws = "ws"

// pollEvery is the polling step: the store offers no event to wait on.
const pollEvery = 20 * time.Millisecond

// enqueue runs app hello's action with input through the catalog's one
// enqueue path, as the API trigger does.
func (w *world) enqueue(t *testing.T, action, input string) uuid.UUID {
	t.Helper()
	res, err := w.db.EnqueueAction(t.Context(), catalog.EnqueueRequest{Workspace: ws, App: "hello",
		Action: action, TriggerKind: spine.TriggerAPI, CreatedBy: "e2e", Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("enqueue hello/%s %s: %v", action, input, err)
	}
	return res.ID
}

// waitFor polls the job until done reports true, and fails t with the
// job's state and logs when within passes first.
func (w *world) waitFor(t *testing.T, id uuid.UUID, within time.Duration, what string, done func(spine.Job) bool) spine.Job {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		j, err := w.db.GetJob(t.Context(), ws, id)
		if err != nil {
			t.Fatalf("get job %s: %v", id, err)
		}
		if done(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not %s after %s: status %s, attempt %d, error %+v, last error %+v; logs:\n%s",
				id, what, within, j.Status, j.Attempt, j.Error, j.LastError, w.logs(t, id))
		}
		if !sleepCtx(t.Context(), pollEvery) {
			t.Fatalf("test ended while waiting for job %s", id)
		}
	}
}

// waitTerminal polls until the job is finished.
func (w *world) waitTerminal(t *testing.T, id uuid.UUID, within time.Duration) spine.Job {
	t.Helper()
	return w.waitFor(t, id, within, "finished", func(j spine.Job) bool { return j.Status.Terminal() })
}

// waitLogs polls until the job's logs contain want.
func (w *world) waitLogs(t *testing.T, id uuid.UUID, want string, within time.Duration) {
	t.Helper()
	w.waitFor(t, id, within, "logging "+want, func(spine.Job) bool { return strings.Contains(w.logs(t, id), want) })
}

// logs returns the job's stored output (Store.Logs).
func (w *world) logs(t *testing.T, id uuid.UUID) string {
	t.Helper()
	chunks, err := w.db.Logs(context.Background(), id, 0)
	if err != nil {
		t.Fatalf("logs of %s: %v", id, err)
	}
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(c.Data)
	}
	return b.String()
}

// sleepCtx waits d, or returns false when ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}
