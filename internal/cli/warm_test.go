package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/internal/testdb"
)

// TestDevShowsWarmPool: dev tells how many warm runtime processes it
// holds, in /readyz and as gauges on /metrics.
func TestDevShowsWarmPool(t *testing.T) {
	testdb.RequireSandbox(t)
	clearSettingsEnv(t)
	base, _ := startDevForTest(t, filepath.Join(t.TempDir(), "state"))
	get := func(path string) string {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", path, res.StatusCode, body)
		}
		return string(body)
	}
	var ready struct {
		Warm *struct {
			Processes, Busy, Max int
			Memory               int64 `json:"memory_bytes"`
		}
	}
	if err := json.Unmarshal([]byte(get("/readyz")), &ready); err != nil || ready.Warm == nil || ready.Warm.Max < 1 {
		t.Fatalf("readyz warm %+v, %v", ready.Warm, err)
	}
	m := get("/metrics")
	for _, g := range []string{"windforce_warm_processes 0", "windforce_warm_processes_busy 0", "windforce_warm_memory_bytes 0"} {
		if !strings.Contains(m, g) {
			t.Errorf("/metrics lacks %q", g)
		}
	}
}
