package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
)

// TestViewJobLimits: the pinned limits appear as "limits" with the fields
// that are set (memory in bytes), and not at all when none is.
func TestViewJobLimits(t *testing.T) {
	t.Parallel()
	j := spine.Job{ID: uuid.Must(uuid.NewV7()), Pin: spine.Pin{Limits: spine.Limits{Memory: 512 << 20, Pids: 256, CPU: 0.5}}}
	out, err := json.Marshal(server.ViewJob(j))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"limits":{"memory":536870912,"pids":256,"cpu":0.5}`) {
		t.Fatalf("job view %s lacks its limits", out)
	}
	j.Pin.Limits = spine.Limits{Pids: 8}
	if out, _ = json.Marshal(server.ViewJob(j)); !strings.Contains(string(out), `"limits":{"pids":8}`) {
		t.Fatalf("job view %s: want only pids", out)
	}
	j.Pin.Limits = spine.Limits{}
	if out, _ = json.Marshal(server.ViewJob(j)); strings.Contains(string(out), `"limits"`) {
		t.Fatalf("job view %s shows limits none set", out)
	}
}
