package metrics_test

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/windforce/windforce/internal/teststore"
	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/metrics/metricstest"
	"github.com/windforce/windforce/spine"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// forEachStore runs fn on a migrated SQLite store and a migrated Postgres
// store (a fresh schema), in parallel.
func forEachStore(t *testing.T, fn func(t *testing.T, s spine.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, teststore.SQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, teststore.Postgres(t, 4))
	})
}

// enqueue adds one job of tag in workspace ws, created at now (zero: the
// store's clock), scheduled for at (zero: now).
func enqueue(t *testing.T, s spine.Store, ws, tag string, now, at time.Time) {
	t.Helper()
	_, err := s.Enqueue(t.Context(), spine.EnqueueParams{
		Workspace: ws, TriggerKind: spine.TriggerAPI, CreatedBy: "test", Input: json.RawMessage(`{}`),
		Pin: spine.Pin{GitSourceID: "src", CommitSHA: "0123456789abcdef0123456789abcdef01234567",
			AppKey: "hello", ActionKey: "greet", Entrypoint: "src/main.ts", Runtime: "bun",
			Timeout: time.Minute, Tag: tag, Retry: spine.RetryPolicy{MaxAttempts: 1, Backoff: time.Second, Factor: 2}},
		Now: now, ScheduledFor: at,
	})
	if err != nil {
		t.Fatal(err)
	}
}

// serve serves m.Handler() and scrapes it once.
func serve(t *testing.T, m *metrics.Metrics) metricstest.Scrape {
	t.Helper()
	hs := httptest.NewServer(m.Handler())
	defer hs.Close()
	return metricstest.Get(t, hs.URL)
}
