package runner

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// secretValue has characters base64 and URL escaping change.
const secretValue = "s3cr3t/Value+ok?"

// secretApp returns what each runtime sees of its environment, by
// sha256 (a value a job returns is masked in its result: the hash is
// what tells the test the job had it), prints its secret in pieces and
// encoded, and throws it.
var secretApp = map[string]string{
	"main.ts": `import { createHash } from "node:crypto";
const h = (v: string | undefined) => v === undefined ? null : createHash("sha256").update(v).digest("hex");
export async function main(input: any, ctx: any) {
  const env = process.env;
  switch (ctx.action) {
    case "env":
      return { key: h(env.API_KEY), region: env.REGION ?? null, token_ok: env.WF_TOKEN === ctx.token,
        home: env.HOME, all: Object.values(env).map(h) };
    case "return": {
      const v = env.API_KEY as string;
      console.log("b64 " + Buffer.from(v).toString("base64") + " url " + encodeURIComponent(v));
      return { v, nested: { b64url: Buffer.from(v).toString("base64url"), json: JSON.stringify({ v }) } };
    }
    case "throw":
      throw new Error("refused with " + env.API_KEY);
  }
  throw new Error("unknown action " + ctx.action);
}
`,
	"main.py": `import hashlib, os
def h(v):
    return None if v is None else hashlib.sha256(v.encode()).hexdigest()
def main(input, ctx):
    return {"key": h(os.environ.get("API_KEY")), "region": os.environ.get("REGION"),
            "all": [h(v) for v in os.environ.values()]}
`,
	"run.sh": `#!/bin/sh
if [ "$WF_ACTION" = print ]; then
	# The value in pieces of 3 bytes, each its own write, past the flush
	# interval, after a first line the sink appends on its own.
	echo before
	sleep 0.5
	i=1
	while [ $i -le ${#API_KEY} ]; do
		printf %s "$(printf %s "$API_KEY" | cut -c$i-$((i + 2)))"
		sleep 0.2
		i=$((i + 3))
	done
	echo
	echo "b64 $(printf %s "$API_KEY" | base64 -w0) end"
	exit 0
fi
k=$(printf %s "$API_KEY" | sha256sum | cut -d' ' -f1)
printf '{"key":"%s","region":"%s"}' "$k" "$REGION" >"$WF_RESULT"
`,
}

// secretHarness is a harness whose runner reads secrets from its store,
// with the app above as commit "sec" of workspaces ws and ws2.
type secretHarness struct {
	*harness
	core *store.Store
	key  secrets.Key
}

func setupSecrets(t *testing.T, cfg func(*Config)) *secretHarness {
	t.Helper()
	key, err := secrets.DeriveKey([]byte("test-secret"))
	if err != nil {
		t.Fatal(err)
	}
	var core *store.Store
	h := setup(t, harnessOpts{cfg: func(c *Config) {
		core = c.Store.(*store.Store)
		c.Secrets = core
		if cfg != nil {
			cfg(c)
		}
	}})
	var files []objectcache.File
	for p, data := range secretApp {
		files = append(files, objectcache.File{Path: p, Mode: 0o755, Data: []byte(data)})
	}
	for _, ws := range []string{"ws", "ws2"} {
		if err := h.cache.Put(context.Background(), objectcache.Key{Workspace: ws, Source: "src", Commit: "sec"}, files); err != nil {
			t.Fatal(err)
		}
	}
	return &secretHarness{harness: h, core: core, key: key}
}

// put sets secret name of ws to value with the harness's key.
func (h *secretHarness) put(ws, name, value string) {
	h.t.Helper()
	h.putWith(h.key, ws, name, value)
}

func (h *secretHarness) putWith(key secrets.Key, ws, name, value string) {
	h.t.Helper()
	if _, _, err := h.core.PutSecret(context.Background(), key, secrets.Put{Workspace: ws, Name: name, Value: []byte(value), Actor: "test"}); err != nil {
		h.t.Fatalf("put secret %s/%s: %v", ws, name, err)
	}
}

// secretJob is one enqueue of the secret app.
type secretJob struct {
	ws, entry, runtime, action string
	env                        []spine.EnvVar
	// later delays the job (scheduled_for), so the test can change the
	// secret between enqueue and claim.
	later time.Duration
}

// apiKeyEnv is the env of a job naming secret api_key, and a literal.
var apiKeyEnv = []spine.EnvVar{{Name: "API_KEY", Secret: "api_key"}, {Name: "REGION", Value: "eu-west-1"}}

func (h *secretHarness) enqueueSecret(j secretJob) uuid.UUID {
	h.t.Helper()
	if j.ws == "" {
		j.ws = "ws"
	}
	if j.entry == "" {
		j.entry, j.runtime = "main.ts", "bun"
	}
	p := spine.EnqueueParams{Workspace: j.ws, TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`null`),
		Pin: spine.Pin{GitSourceID: "src", CommitSHA: "sec", AppKey: "app", ActionKey: j.action, Entrypoint: j.entry,
			Runtime: j.runtime, Timeout: time.Minute, Tag: spine.DefaultTag, Env: j.env}}
	if j.later > 0 {
		p.ScheduledFor = time.Now().Add(j.later)
	}
	res, err := h.core.Enqueue(context.Background(), p)
	if err != nil {
		h.t.Fatal(err)
	}
	return res.ID
}

// waitIn polls job id of ws until it is finished.
func (h *secretHarness) waitIn(ws string, id uuid.UUID) spine.Job {
	h.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		j, err := h.core.GetJob(context.Background(), ws, id)
		if err != nil {
			h.t.Fatal(err)
		}
		if j.Status.Terminal() {
			return j
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("job %s still %s; logs:\n%s", id, j.Status, h.logs(id))
		}
		time.Sleep(20 * time.Millisecond) // polling the store: no event to wait on
	}
}

func sha(v string) string {
	s := sha256.Sum256([]byte(v))
	return hex.EncodeToString(s[:])
}

// seen is a job's result as the secret app's "env" action returns it.
type seen struct {
	Key     *string  `json:"key"`
	Region  *string  `json:"region"`
	TokenOK bool     `json:"token_ok"`
	Home    string   `json:"home"`
	All     []string `json:"all"`
}

func resultOf(t *testing.T, h *secretHarness, j spine.Job) seen {
	t.Helper()
	if j.Status != spine.StatusSuccess {
		t.Fatalf("job %s: %s %+v; logs:\n%s", j.ID, j.Status, j.Error, h.logs(j.ID))
	}
	var s seen
	if err := json.Unmarshal(j.Result, &s); err != nil {
		t.Fatalf("result %s: %v", j.Result, err)
	}
	return s
}

// TestSecretsReachTheirJobsOnly: a bun, a python and a command job read
// their secret (and a literal) from the environment, and the job view
// names the version; a job without the reference, and a job of another
// workspace naming the same name, do not see the value; manifest names
// cannot shadow the runner's own variables (HOME; PATH, else bun would
// not start).
func TestSecretsReachTheirJobsOnly(t *testing.T) {
	t.Parallel()
	requireBun(t)
	h := setupSecrets(t, nil)
	h.put("ws", "api_key", secretValue)
	h.put("ws2", "api_key", "the other workspace's value")
	for _, c := range []struct{ entry, runtime string }{{"main.ts", "bun"}, {"main.py", "python"}, {"run.sh", "command"}} {
		t.Run(c.runtime, func(t *testing.T) {
			t.Parallel()
			j := h.waitIn("ws", h.enqueueSecret(secretJob{entry: c.entry, runtime: c.runtime, action: "env", env: apiKeyEnv}))
			s := resultOf(t, h, j)
			if s.Key == nil || *s.Key != sha(secretValue) || s.Region == nil || *s.Region != "eu-west-1" {
				t.Fatalf("%s job saw API_KEY %v, REGION %v; want the secret and the literal", c.runtime, s.Key, s.Region)
			}
			if !slices.Equal(j.Secrets, []string{"api_key@1"}) {
				t.Fatalf("job view secrets %q, want [api_key@1]", j.Secrets)
			}
		})
	}
	t.Run("no reference", func(t *testing.T) {
		t.Parallel()
		j := h.waitIn("ws", h.enqueueSecret(secretJob{action: "env", env: []spine.EnvVar{{Name: "REGION", Value: "x"}}}))
		s := resultOf(t, h, j)
		if s.Key != nil || slices.Contains(s.All, sha(secretValue)) || len(j.Secrets) != 0 {
			t.Fatalf("a job naming no secret saw API_KEY %v (value among its env: %v), view %q",
				s.Key, slices.Contains(s.All, sha(secretValue)), j.Secrets)
		}
	})
	t.Run("other workspace", func(t *testing.T) {
		t.Parallel()
		j := h.waitIn("ws2", h.enqueueSecret(secretJob{ws: "ws2", action: "env", env: apiKeyEnv}))
		s := resultOf(t, h, j)
		if s.Key == nil || *s.Key != sha("the other workspace's value") || slices.Contains(s.All, sha(secretValue)) {
			t.Fatalf("a job of ws2 saw API_KEY %v; want ws2's own value, never ws's", s.Key)
		}
	})
	t.Run("runner variables win", func(t *testing.T) {
		t.Parallel()
		// WF_* names are refused at enqueue; the runner's other names are
		// dropped at claim.
		env := []spine.EnvVar{{Name: "API_KEY", Secret: "api_key"}, {Name: "HOME", Value: "/evil"}, {Name: "PATH", Value: "/evil"}}
		j := h.waitIn("ws", h.enqueueSecret(secretJob{action: "env", env: env}))
		s := resultOf(t, h, j)
		if !s.TokenOK || s.Home == "/evil" || s.Key == nil || *s.Key != sha(secretValue) {
			t.Fatalf("WF_TOKEN is the job's own: %v; HOME %q; API_KEY set: %v", s.TokenOK, s.Home, s.Key != nil)
		}
	})
}

// TestSecretMaskedThroughTheWorker: a job that prints its secret in
// pieces (each flushed as its own log chunk) and base64-encoded, a job
// that prints it encoded and returns it, and one that throws it leave
// none of it in their stored logs, result or error; each shows
// [secret:api_key].
func TestSecretMaskedThroughTheWorker(t *testing.T) {
	t.Parallel()
	requireBun(t)
	h := setupSecrets(t, nil)
	h.put("ws", "api_key", secretValue)
	forms := secretForms(secretValue)
	leaks := func(what, stored string) {
		t.Helper()
		for _, f := range forms {
			if strings.Contains(stored, f) {
				t.Errorf("stored %s holds %q: %s", what, f, stored)
			}
		}
		if !strings.Contains(stored, "[secret:api_key]") {
			t.Errorf("stored %s shows no mask: %s", what, stored)
		}
	}
	printed := h.waitIn("ws", h.enqueueSecret(secretJob{entry: "run.sh", runtime: "command", action: "print", env: apiKeyEnv}))
	if printed.Status != spine.StatusSuccess {
		t.Fatalf("print job: %s %+v; logs:\n%s", printed.Status, printed.Error, h.logs(printed.ID))
	}
	chunks, err := h.core.Logs(context.Background(), printed.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The sink appended while the value was being written (the pieces
	// themselves are held back: each may begin the value).
	if len(chunks) < 2 || chunks[0].Data != "before\n" {
		t.Fatalf("the job's output came in chunks %+v; want the first line appended before the value", chunks)
	}
	logs := h.logs(printed.ID)
	leaks("logs", logs)
	if want := "before\n[secret:api_key]\nb64 [secret:api_key] end\n"; logs != want {
		t.Errorf("stored logs %q, want %q", logs, want)
	}

	returned := h.waitIn("ws", h.enqueueSecret(secretJob{action: "return", env: apiKeyEnv}))
	if returned.Status != spine.StatusSuccess {
		t.Fatalf("return job: %s %+v", returned.Status, returned.Error)
	}
	leaks("logs of the returning job", h.logs(returned.ID))
	leaks("result", string(returned.Result))
	var decoded any
	if err := json.Unmarshal(returned.Result, &decoded); err != nil {
		t.Fatalf("masked result is not JSON: %s", returned.Result)
	}
	leaks("result (decoded)", fmt.Sprint(decoded))
	b64 := base64.StdEncoding.EncodeToString([]byte(secretValue))
	if strings.Contains(string(returned.Result), b64[:len(b64)-2]) {
		t.Errorf("result holds the base64: %s", returned.Result)
	}

	thrown := h.waitIn("ws", h.enqueueSecret(secretJob{action: "throw", env: apiKeyEnv}))
	if thrown.Status != spine.StatusFailure || thrown.Error == nil {
		t.Fatalf("throw job: %s %+v", thrown.Status, thrown.Error)
	}
	leaks("error message", thrown.Error.Message)
	leaks("error stack", thrown.Error.Stack)
	leaks("logs of the failed job", h.logs(thrown.ID))
}

// TestSecretChangedAfterEnqueue: the value a job gets is the one current
// at claim: a secret replaced after enqueue gives the new value (and the
// view says @2); one deleted after enqueue fails the job naming it.
func TestSecretChangedAfterEnqueue(t *testing.T) {
	t.Parallel()
	requireBun(t)
	h := setupSecrets(t, nil)
	h.put("ws", "api_key", "first value")
	h.put("ws", "doomed", "soon gone")
	replaced := h.enqueueSecret(secretJob{action: "env", env: apiKeyEnv, later: time.Second})
	deleted := h.enqueueSecret(secretJob{action: "env", env: []spine.EnvVar{{Name: "API_KEY", Secret: "doomed"}}, later: time.Second})
	h.put("ws", "api_key", secretValue)
	if err := h.core.DeleteSecret(context.Background(), "ws", "doomed", "test"); err != nil {
		t.Fatal(err)
	}
	j := h.waitIn("ws", replaced)
	if s := resultOf(t, h, j); s.Key == nil || *s.Key != sha(secretValue) || !slices.Equal(j.Secrets, []string{"api_key@2"}) {
		t.Fatalf("replaced secret: saw the new value %v, view %q; want the new value and api_key@2", s.Key != nil && *s.Key == sha(secretValue), j.Secrets)
	}
	j = h.waitIn("ws", deleted)
	want := `secret "doomed" no longer exists in workspace "ws"`
	if j.Status != spine.StatusFailure || j.Error == nil || j.Error.Message != want || !strings.Contains(h.logs(deleted), want) {
		t.Fatalf("deleted secret: %s %+v; want failure %q (also in the logs:\n%s)", j.Status, j.Error, want, h.logs(deleted))
	}
}

// TestSecretsAcrossKeyRotation: a worker holding the new key cannot open
// a secret still sealed with the old one (the job fails saying so, naming
// both key IDs); after rotate-key, a job enqueued before the rotation
// runs with the value.
func TestSecretsAcrossKeyRotation(t *testing.T) {
	t.Parallel()
	requireBun(t)
	newKey, err := secrets.DeriveKey([]byte("the new secret after rotation"))
	if err != nil {
		t.Fatal(err)
	}
	h := setupSecrets(t, func(c *Config) { c.SecretsKey = newKey })
	h.put("ws", "api_key", secretValue) // sealed with the old key
	j := h.waitIn("ws", h.enqueueSecret(secretJob{action: "env", env: apiKeyEnv}))
	if j.Status != spine.StatusFailure || j.Error == nil || !strings.Contains(j.Error.Message, `secret "api_key" (version 1) of workspace "ws" cannot be decrypted`) ||
		!strings.Contains(j.Error.Message, h.key.ID()) || !strings.Contains(j.Error.Message, newKey.ID()) {
		t.Fatalf("before rotation: %s %+v; want a failure naming the secret and both keys", j.Status, j.Error)
	}
	waiting := h.enqueueSecret(secretJob{action: "env", env: apiKeyEnv, later: time.Second})
	if _, err := h.core.RotateSecretsKey(context.Background(), h.key, newKey, 0); err != nil {
		t.Fatal(err)
	}
	j = h.waitIn("ws", waiting)
	if s := resultOf(t, h, j); s.Key == nil || *s.Key != sha(secretValue) {
		t.Fatalf("after rotation the job saw API_KEY %v, want the value", s.Key)
	}
}
