package runner

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// runtimeFixture is one runtime's conformance app under testdata/apps.
type runtimeFixture struct{ runtime, dir, entry string }

var fixtures = []runtimeFixture{
	{"bun", "apps/bun", "main.ts"},
	{"node", "apps/node", "main.mjs"},
	{"python", "apps/python", "main.py"},
	{"command", "apps/command", "run.sh"},
}

// conformanceCase is one row of the entry-contract table; each runs on
// every runtime.
type conformanceCase struct {
	name, action, input, schema string
	wantStatus                  spine.Status
	wantResult                  string   // exact JSON when set
	wantError                   []string // substrings of the error message
	wantLogs                    []string // in this order
}

var conformanceCases = []conformanceCase{
	{name: "input in, result out", action: "echo", input: `{"name":"Ada"}`,
		wantStatus: spine.StatusSuccess, wantResult: `{"echo":{"name":"Ada"},"action":"echo","job":true,"token":"string"}`,
		wantLogs: []string{"out-1", "err-2", "out-3"}},
	{name: "throw fails with message", action: "throw", wantStatus: spine.StatusFailure, wantError: []string{"boom from"}},
	{name: "exit non-zero fails", action: "exit", wantStatus: spine.StatusFailure, wantError: []string{"exited with status 3"}},
	{name: "output schema mismatch", action: "wrong", schema: `{"type":"object","properties":{"greeting":{"type":"string"}}}`,
		wantStatus: spine.StatusFailure, wantError: []string{"does not match the output schema", "/greeting"}},
	{name: "oversized result", action: "big", input: `{"n":5000}`, wantStatus: spine.StatusFailure,
		wantError: []string{"over the limit of 4096 bytes", "WINDFORCE_MAX_RESULT_BYTES"}},
	{name: "result at the limit", action: "big", input: `{"n":4000}`, wantStatus: spine.StatusSuccess},
	{name: "huge log capped", action: "spam", input: `{"kb":4096}`, wantStatus: spine.StatusSuccess,
		wantLogs: []string{"yyyy", "[windforce: log truncated"}},
	{name: "commit folder read-only", action: "write", wantStatus: spine.StatusSuccess, wantResult: `{"wrote":false}`},
	{name: "token masked in logs", action: "token", wantStatus: spine.StatusSuccess, wantLogs: []string{"token is [WF_TOKEN] ok"}},
}

// testMaxLog is below a pipe's 64 KiB buffer: a runtime that exits with
// output still queued (bun's async stdout) has written at least a full
// pipe, so the cap is always crossed and its marker always written. At
// 64 KiB a run could deliver exactly the cap and no marker.
const testMaxLog = 32 << 10

func TestRuntimeConformance(t *testing.T) {
	t.Parallel()
	requireBun(t)
	h := setup(t, harnessOpts{concurrency: 6, cfg: func(c *Config) {
		c.MaxResultBytes = 4096
		c.MaxLogBytes = testMaxLog
	}})
	for _, f := range fixtures {
		h.putFixture(f.dir, "c-"+f.runtime, nil)
	}
	for _, f := range fixtures {
		for _, tc := range conformanceCases {
			t.Run(f.runtime+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				runConformance(t, h, f, tc)
			})
		}
	}
}

func runConformance(t *testing.T, h *harness, f runtimeFixture, tc conformanceCase) {
	id := h.enqueue(job{app: f.runtime, commit: "c-" + f.runtime, entry: f.entry, runtime: f.runtime, action: tc.action,
		input: tc.input, outputSchema: tc.schema})
	j := h.wait(id, 60*time.Second)
	logs := h.logs(id)
	if j.Status != tc.wantStatus {
		t.Fatalf("status %s, want %s; error %+v; logs:\n%.2000s", j.Status, tc.wantStatus, j.Error, logs)
	}
	if tc.wantResult != "" && !jsonEqual(t, j.Result, tc.wantResult) {
		t.Errorf("result %s, want %s", j.Result, tc.wantResult)
	}
	for _, want := range tc.wantError {
		if j.Error == nil || !strings.Contains(j.Error.Message, want) {
			t.Errorf("error %+v does not say %q", j.Error, want)
		}
	}
	assertInOrder(t, logs, tc.wantLogs)
	if strings.Contains(logs, "wf1.") {
		t.Errorf("logs carry an unmasked token")
	}
	if len(logs) > testMaxLog+4096 {
		t.Errorf("stored logs are %d bytes, cap is %d", len(logs), testMaxLog)
	}
}

func assertInOrder(t *testing.T, logs string, want []string) {
	t.Helper()
	rest := logs
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("logs lack %q after the previous lines; %d bytes of logs, tail:\n%s", w, len(logs), logs[max(0, len(logs)-300):])
			return
		}
		rest = rest[i+len(w):]
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("result %q: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// TestJobEnvironmentIsClean checks that the job sees the entry contract and
// nothing of the worker's configuration.
func TestJobEnvironmentIsClean(t *testing.T) {
	t.Setenv("WINDFORCE_DATABASE_URL", "postgres://secret@db/x")
	t.Setenv("WINDFORCE_SECRET", "do-not-leak")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "do-not-leak")
	h := setup(t, harnessOpts{})
	h.putFixture("apps/command", "c-env", nil)
	j := h.wait(h.enqueue(job{commit: "c-env", entry: "run.sh", runtime: "command", action: "env"}), 30*time.Second)
	var names []string
	if err := json.Unmarshal(j.Result, &names); err != nil {
		t.Fatalf("result %s: %v (error %+v)", j.Result, err, j.Error)
	}
	for _, n := range names {
		if (strings.HasPrefix(n, "WINDFORCE_") && n != "WINDFORCE_URL") || strings.HasPrefix(n, "AWS_") {
			t.Errorf("job environment has %s", n)
		}
	}
	for _, must := range []string{"WF_TOKEN", "WINDFORCE_URL", "WF_JOB_ID", "HOME", "TMPDIR", "WF_INPUT", "WF_RESULT"} {
		if !contains(names, must) {
			t.Errorf("job environment lacks %s: %v", must, names)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
