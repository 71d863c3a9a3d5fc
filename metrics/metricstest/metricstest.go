// Package metricstest scrapes a Prometheus endpoint over real HTTP and
// checks its samples, for the tests of metrics and of the server.
package metricstest

import (
	"net/http"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Scrape is one parsed answer of GET /metrics, by metric family name.
type Scrape map[string]*dto.MetricFamily

// Get fetches url over HTTP (no token, as Prometheus does) and parses the
// text format; anything but 200 fails t.
func Get(t testing.TB, url string) Scrape {
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
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

// Value returns the sample of name whose labels are exactly labels
// (name=value pairs): a gauge's or counter's value, a histogram's count.
// ok is false when there is none.
func (s Scrape) Value(name string, labels ...string) (float64, bool) {
	for _, m := range s[name].GetMetric() {
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

// Want fails t unless the sample is there with value v.
func (s Scrape) Want(t testing.TB, v float64, name string, labels ...string) {
	t.Helper()
	got, ok := s.Value(name, labels...)
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
