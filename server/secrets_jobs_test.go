package server_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/apitest"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/store"
)

// vaultMain is an app whose env names secret api_key: it returns the
// sha256 of what it got (a value it returns is masked).
const vaultMain = `import { createHash } from "node:crypto";
export async function main(input: any, ctx: any) {
  const v = process.env.API_KEY;
  return { key: v === undefined ? null : createHash("sha256").update(v).digest("hex"), region: process.env.REGION ?? null };
}
`

// addVault commits the vault app beside hello (its manifest names secret
// api_key in the app's env, and a literal) and syncs it.
func addVault(t *testing.T, e *env) {
	t.Helper()
	manifest := `apps:
  hello:
    entrypoint: src/main.ts
    runtime: bun
    actions:
      greet:
        input_schema: schemas/greet.input.json
        output_schema: schemas/greet.output.json
  vault:
    entrypoint: vault/main.ts
    runtime: bun
    env:
      API_KEY: { secret: api_key }
      REGION: eu-west-1
    actions:
      read: {}
`
	e.repo.Write(t, map[string]string{"windforce.yaml": manifest, "vault/main.ts": vaultMain})
	e.repo.CommitPush(t, "vault")
	e.call("POST", "/api/w/ws/sources/main/sync", adminToken, "").want(http.StatusOK)
}

// putSecret sets secret name of ws in the store core with the key a
// worker of this env derives from its WINDFORCE_SECRET.
func putSecret(t *testing.T, e *env, ws, name, value string) {
	t.Helper()
	key, err := secrets.DeriveKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.db.(*store.Store).PutSecret(t.Context(), key, secrets.Put{Workspace: ws, Name: name, Value: []byte(value), Actor: "test"}); err != nil {
		t.Fatal(err)
	}
}

// TestRunMissingSecret: a run, a webhook and a requeue whose job's env
// names a secret the workspace lacks answer 422 missing_secret naming it
// and create no job; once the secret exists the same run enqueues, and
// the job reads it, the view naming its version; on both databases.
func TestRunMissingSecret(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		addVault(t, e)
		before := e.jobCount()
		details := e.call("POST", "/api/w/ws/jobs/run/vault/read", adminToken, `{}`).wantError(http.StatusUnprocessableEntity, "missing_secret")
		if names, _ := details["secrets"].([]any); len(names) != 1 || names[0] != "api_key" {
			t.Fatalf("details %v, want secrets [api_key]", details)
		}
		tok := e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":["webhook"]}`).want(http.StatusCreated).obj()["token"].(string)
		e.call("POST", "/api/w/ws/webhooks/vault/read", tok, `{}`).wantError(http.StatusUnprocessableEntity, "missing_secret")
		if n := e.jobCount(); n != before {
			t.Fatalf("%d jobs after the refusals, want %d", n, before)
		}

		putSecret(t, e, "other", "api_key", "not this workspace's")
		e.call("POST", "/api/w/ws/jobs/run/vault/read", adminToken, `{}`).wantError(http.StatusUnprocessableEntity, "missing_secret")

		putSecret(t, e, "ws", "api_key", "xoxb-the-value")
		job := e.call("POST", "/api/w/ws/jobs/run/vault/read?scheduled_for="+time.Now().Add(time.Hour).UTC().Format(time.RFC3339), adminToken, `{}`).
			want(http.StatusCreated).obj()
		id := job["id"].(string)
		if err := e.db.(*store.Store).DeleteSecret(t.Context(), "ws", "api_key", "test"); err != nil {
			t.Fatal(err)
		}
		e.call("POST", "/api/w/ws/jobs/"+id+"/requeue", adminToken, "").wantError(http.StatusUnprocessableEntity, "missing_secret")
		view := e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").want(http.StatusOK).obj()
		if view["status"] != "queued" || !strings.Contains(string(e.call("GET", "/api/w/ws/jobs/"+id, adminToken, "").body), `"secrets":[]`) {
			t.Fatalf("the job of a refused requeue: %v; want it still waiting, no secrets received", view)
		}
	})
}

// TestSecretReachesJobThroughAPI: a job run through the API reads its
// secret and the literal from its environment, and GET …/jobs/{id} names
// the version it received; on both databases.
func TestSecretReachesJobThroughAPI(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		addVault(t, e)
		putSecret(t, e, "ws", "api_key", "first")
		putSecret(t, e, "ws", "api_key", "xoxb-the-value")
		apitest.StartWorker(t, e.api, "bun", apitest.WorkerOptions{})
		res := e.call("POST", "/api/w/ws/jobs/run/vault/read?wait=60s", adminToken, `{}`).want(http.StatusOK).obj()
		sum := sha256.Sum256([]byte("xoxb-the-value"))
		r, _ := res["result"].(map[string]any)
		if res["status"] != "success" || r["key"] != hex.EncodeToString(sum[:]) || r["region"] != "eu-west-1" {
			t.Fatalf("run: %v; want the secret's hash and the literal", res)
		}
		body := string(e.call("GET", "/api/w/ws/jobs/"+res["id"].(string), adminToken, "").want(http.StatusOK).body)
		if !strings.Contains(body, `"secrets":["api_key@2"]`) || strings.Contains(body, "xoxb") {
			t.Fatalf("job view %s; want secrets [api_key@2] and no value", body)
		}
	})
}
