package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/spine"
)

const testToken = "wf1.eyJqb2IiOiIxMjMifQ.c2ln-_x"

// TestTokenMaskerResult: the token is masked in every string of a JSON
// value however it is escaped, the value stays valid JSON, and strings
// without it keep their bytes.
func TestTokenMaskerResult(t *testing.T) {
	t.Parallel()
	m := newMasker(testToken, nil)
	escaped := `\u0077f1.eyJqb2IiOiIxMjMifQ.c2ln\u002d_x` // every form a JSON encoder may choose
	cases := []struct{ in, want string }{
		{`{"t":"` + testToken + `"}`, `{"t":"[WF_TOKEN]"}`},
		{`["a ` + testToken + ` b",1,true,null]`, `["a [WF_TOKEN] b",1,true,null]`},
		{`{"` + testToken + `":1}`, `{"[WF_TOKEN]":1}`},
		{`{"t":"` + escaped + `","keep":"\u00e9\n"}`, `{"t":"[WF_TOKEN]","keep":"\u00e9\n"}`},
		{`{"t":"x\"` + testToken + `\\"}`, `{"t":"x\"[WF_TOKEN]\\"}`},
		{`"<` + strings.ReplaceAll(testToken, "-", `\u002D`) + `>"`, `"<[WF_TOKEN]>"`},
		{`{"n":1.50,"s":"no token \/ here"}`, `{"n":1.50,"s":"no token \/ here"}`},
		{`"wf1.other"`, `"wf1.other"`},
	}
	for _, c := range cases {
		got := string(m.result(json.RawMessage(c.in)))
		if got != c.want {
			t.Errorf("result(%s) = %s, want %s", c.in, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("result(%s) = %s is not valid JSON", c.in, got)
		}
	}
	if got := newMasker("", nil).result(json.RawMessage(`"x"`)); string(got) != `"x"` {
		t.Errorf("no token: %s", got)
	}
}

// TestTokenMaskerError: a *Failure is masked in place (message and
// stack), any other error by its text, and errors.Is still sees through.
func TestTokenMaskerError(t *testing.T) {
	t.Parallel()
	m := newMasker(testToken, nil)
	f := &Failure{Message: "bad " + testToken, Stack: "Error: bad " + testToken + "\n at main", Kind: "error"}
	err := m.err(fmt.Errorf("outer: %w", f))
	je := jobErrorOf(err)
	if strings.Contains(je.Message+je.Stack+err.Error(), testToken) || je.Message != "bad [WF_TOKEN]" {
		t.Fatalf("failure not masked: %+v / %v", je, err)
	}
	base := errors.New("install")
	err = m.err(fmt.Errorf("saw %s: %w", testToken, base))
	if err.Error() != "saw [WF_TOKEN]: install" || !errors.Is(err, base) {
		t.Fatalf("plain error: %v (is base: %v)", err, errors.Is(err, base))
	}
	if m.err(base) != base {
		t.Fatal("an error without the token was replaced")
	}
}

// jobErrorOf is what the worker would store for err.
func jobErrorOf(err error) spine.JobError {
	var f spine.JobFailure
	if errors.As(err, &f) {
		return f.JobError()
	}
	return spine.JobError{Message: err.Error()}
}

// maskApp is a bun app and a command app that return, throw and print
// their own WF_TOKEN.
var maskApp = map[string]string{
	"main.ts": `export async function main(input: any, ctx: any) {
  const t = process.env.WF_TOKEN as string;
  if (t !== ctx.token || !t.startsWith("wf1.")) throw new Error("no token in the environment");
  switch (ctx.action) {
    case "return":
      return { t, list: ["a " + t + " b"], [t]: 1, nested: { json: JSON.stringify({ t }) } };
    case "throw":
      throw new Error("refused with " + t);
    case "retry":
      throw new Error("attempt " + ctx.attempt + " saw " + t);
    case "schema":
      return { t };
  }
  throw new Error("unknown action " + ctx.action);
}
`,
	"run.sh": `#!/bin/sh
case "$WF_ACTION" in
escaped)
	# The token with its first letter and a slash escaped, as some encoders write them.
	printf '{"t":"\\u0077%s","s":"\\/%s"}' "${WF_TOKEN#w}" "$WF_TOKEN" >"$WF_RESULT" ;;
stderr)
	echo "failing with $WF_TOKEN" >&2
	exit 3 ;;
esac
`,
}

// putMaskApp writes maskApp as commit "mask".
func (h *harness) putMaskApp() {
	h.t.Helper()
	var files []objectcache.File
	for p, data := range maskApp {
		files = append(files, objectcache.File{Path: p, Mode: 0o755, Data: []byte(data)})
	}
	if err := h.cache.Put(context.Background(), objectcache.Key{Workspace: "ws", Source: "src", Commit: "mask"}, files); err != nil {
		h.t.Fatal(err)
	}
}

// TestTokenMaskedInStoredOutcome: a job that returns, throws or prints
// its own WF_TOKEN leaves no token in its stored result, error or
// last_error; each place shows the mask instead.
func TestTokenMaskedInStoredOutcome(t *testing.T) {
	t.Parallel()
	requireBun(t)
	h := setup(t, harnessOpts{})
	h.putMaskApp()
	cases := []struct {
		name, entry, runtime, action, schema string
		retry                                spine.RetryPolicy
		want                                 spine.Status
		// masked are the stored fields that must show the mask.
		masked []string
	}{
		{name: "returned", entry: "main.ts", runtime: "bun", action: "return", want: spine.StatusSuccess, masked: []string{"result"}},
		{name: "escaped in the result file", entry: "run.sh", runtime: "command", action: "escaped", want: spine.StatusSuccess, masked: []string{"result"}},
		{name: "thrown", entry: "main.ts", runtime: "bun", action: "throw", want: spine.StatusFailure, masked: []string{"error.message", "error.stack"}},
		{name: "thrown, then waiting for its retry", entry: "main.ts", runtime: "bun", action: "retry", want: spine.StatusQueued,
			retry:  spine.RetryPolicy{MaxAttempts: 2, Backoff: time.Hour, Factor: 1},
			masked: []string{"last_error.message", "last_error.stack"}},
		{name: "quoted by the output schema check", entry: "main.ts", runtime: "bun", action: "schema", want: spine.StatusFailure,
			schema: `{"type":"object","properties":{"t":{"pattern":"^nope$"}}}`, masked: []string{"error.message"}},
		{name: "last line of stderr", entry: "run.sh", runtime: "command", action: "stderr", want: spine.StatusFailure, masked: []string{"error.message"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			id := h.enqueue(job{commit: "mask", entry: c.entry, runtime: c.runtime, action: c.action, outputSchema: c.schema, retry: c.retry})
			var j spine.Job
			if c.want == spine.StatusQueued {
				j = h.waitRetry(id, 60*time.Second)
			} else {
				j = h.wait(id, 60*time.Second)
			}
			if j.Status != c.want {
				t.Fatalf("status %s, want %s; error %+v; logs:\n%s", j.Status, c.want, j.Error, h.logs(id))
			}
			fields := storedFields(t, j)
			for name, v := range fields {
				if strings.Contains(v, "wf1.") {
					t.Errorf("stored %s holds the token: %s", name, v)
				}
			}
			for _, name := range c.masked {
				if !strings.Contains(fields[name], tokenMask) {
					t.Errorf("stored %s = %q, want it to show %s", name, fields[name], tokenMask)
				}
			}
		})
	}
}

// storedFields are the job's stored result (as JSON text and decoded) and
// errors, by name.
func storedFields(t *testing.T, j spine.Job) map[string]string {
	t.Helper()
	f := map[string]string{"result": string(j.Result)}
	if len(j.Result) > 0 {
		var v any
		if err := json.Unmarshal(j.Result, &v); err != nil {
			t.Fatalf("stored result %s is not JSON: %v", j.Result, err)
		}
		f["result (decoded)"] = fmt.Sprint(v)
	}
	for name, e := range map[string]*spine.JobError{"error": j.Error, "last_error": j.LastError} {
		if e != nil {
			f[name+".message"], f[name+".stack"] = e.Message, e.Stack
		}
	}
	return f
}

// waitRetry polls the job until its first attempt failed and it waits for
// the next (its last_error is only shown while it waits).
func (h *harness) waitRetry(id uuid.UUID, within time.Duration) spine.Job {
	h.t.Helper()
	return h.waitFor(id, within, func(j spine.Job) bool {
		return j.Status.Terminal() || (j.Status == spine.StatusQueued && j.LastError != nil)
	})
}
