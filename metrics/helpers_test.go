package metrics_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/metrics"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// forEachStore runs fn on a migrated SQLite store and a migrated Postgres
// store (a fresh schema), in parallel.
func forEachStore(t *testing.T, fn func(t *testing.T, s spine.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, openSQLite(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url, schema := testdb.PostgresSchema(t)
		s, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 4, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatal(err)
		}
		fn(t, s)
	})
}

func openSQLite(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), testdb.SQLitePath(t), sqlite.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
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

// scrape is one GET /metrics, parsed.
type scrape map[string]*dto.MetricFamily

// scrapeURL fetches url over HTTP and parses the text format.
func scrapeURL(t *testing.T, url string) scrape {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: status %d", url, res.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// serve serves m.Handler() and scrapes it once.
func serve(t *testing.T, m *metrics.Metrics) scrape {
	t.Helper()
	hs := httptest.NewServer(m.Handler())
	defer hs.Close()
	return scrapeURL(t, hs.URL)
}

// value returns the sample of name whose labels are exactly labels
// (name=value pairs); ok is false when there is none.
func (s scrape) value(name string, labels ...string) (float64, bool) {
	fam, ok := s[name]
	if !ok {
		return 0, false
	}
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// want fails unless the sample is there with value v.
func (s scrape) want(t *testing.T, v float64, name string, labels ...string) {
	t.Helper()
	got, ok := s.value(name, labels...)
	if !ok {
		t.Fatalf("no sample %s%v", name, labels)
	}
	if got != v {
		t.Fatalf("%s%v = %v, want %v", name, labels, got, v)
	}
}

func hasLabels(m *dto.Metric, pairs []string) bool {
	if len(m.GetLabel())*2 != len(pairs) {
		return false
	}
	got := map[string]string{}
	for _, l := range m.GetLabel() {
		got[l.GetName()] = l.GetValue()
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if v, ok := got[pairs[i]]; !ok || v != pairs[i+1] {
			return false
		}
	}
	return true
}
