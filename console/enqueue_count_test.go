package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	dto "github.com/prometheus/client_model/go"

	"github.com/windforce/windforce/spine"
)

// manualCount is the console's windforce_jobs_enqueued_total{trigger=
// "manual",workspace="ws"}; 0 when the sample is absent.
func (e *env) manualCount() float64 {
	e.t.Helper()
	fams, err := e.metrics.Registry().Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != "windforce_jobs_enqueued_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if labels(m)["trigger"] == string(spine.TriggerManual) && labels(m)["workspace"] == ws {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// wantManual fails unless the console counted want manual enqueues.
func (e *env) wantManual(what string, want float64) {
	e.t.Helper()
	if got := e.manualCount(); got != want {
		e.t.Fatalf("%s: windforce_jobs_enqueued_total{trigger=\"manual\"} = %v, want %v", what, got, want)
	}
}

// TestConsoleEnqueuesCounted: the run form and "run again" put jobs in the
// queue, so each counts once in windforce_jobs_enqueued_total (trigger
// manual); a run the schema refuses and a rerun of no job count nothing.
func TestConsoleEnqueuesCounted(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		b.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {""}}).want(http.StatusUnprocessableEntity)
		e.wantManual("refused run", 0)

		p := b.post("/w/ws/apps/hello/greet/run", url.Values{"/name": {"Grace"}}).want(http.StatusSeeOther)
		e.wantManual("run form", 1)

		id := strings.TrimPrefix(p.location, "/w/ws/jobs/")
		again := b.post("/w/ws/jobs/"+id+"/rerun", nil).want(http.StatusSeeOther)
		if again.location == p.location {
			t.Fatalf("rerun answered the old job %s", again.location)
		}
		e.wantManual("run again", 2)

		b.post("/w/ws/jobs/"+uuid.Nil.String()+"/rerun", nil).want(http.StatusNotFound)
		e.wantManual("rerun of no job", 2)
	})
}
