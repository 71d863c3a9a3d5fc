package console_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine"
)

// TestJobPageEnvWarm: the job page shows the pinned env (literals, and
// secret references by name) and warm policy, and neither for a job
// without them.
func TestJobPageEnvWarm(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	pin := spine.Pin{AppKey: "hello", ActionKey: "greet", Runtime: "bun", Timeout: time.Minute, Retry: spine.DefaultRetry,
		Env:  []spine.EnvVar{{Name: "REGION", Value: "eu-west-1"}, {Name: "SLACK_TOKEN", Secret: "slack_token"}},
		Warm: &spine.Warm{MaxJobs: 10, Idle: 30 * time.Second}}
	enqueue := func(pin spine.Pin) string {
		t.Helper()
		res, err := e.db.Enqueue(t.Context(), spine.EnqueueParams{Workspace: ws, TriggerKind: spine.TriggerAPI,
			Input: json.RawMessage(`{}`), Pin: pin})
		if err != nil {
			t.Fatal(err)
		}
		return res.ID.String()
	}
	// Enqueue refuses a reference to a secret the workspace lacks.
	key, err := secrets.DeriveKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.db.PutSecret(t.Context(), key, secrets.Put{Workspace: ws, Name: "slack_token", Value: []byte("xoxb-1"), Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	b := e.browser()
	b.login(adminToken)
	b.get("/w/ws/jobs/"+enqueue(pin)).want(200).contains(`<code>REGION</code>=<code>eu-west-1</code>`,
		`<code>SLACK_TOKEN</code>=<span class="muted">secret</span> <code>slack_token</code>`,
		"up to 10 jobs per process, recycled after 30s idle")
	pin.Env, pin.Warm = nil, nil
	page := b.get("/w/ws/jobs/" + enqueue(pin)).want(200)
	for _, absent := range []string{`class="job-env"`, `class="job-warm"`} {
		if strings.Contains(page.body, absent) {
			t.Errorf("job without env and warm shows %s", absent)
		}
	}
}
