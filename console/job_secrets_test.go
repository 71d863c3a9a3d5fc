package console_test

import (
	"context"
	"strings"
	"testing"

	"github.com/windforce/windforce/spine"
)

// jobSecretsRecorder is the store side that records what a job received
// (the store core; the worker's runner calls it at claim).
type jobSecretsRecorder interface {
	SetJobSecrets(ctx context.Context, lease spine.Lease, received []string) error
}

// TestJobPageShowsSecrets: the job page names the secrets the job
// received, by name and version (never a value); a job that received none
// shows no Secrets line; on both databases.
func TestJobPageShowsSecrets(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		plain := e.enqueue("greet", `{"name":"Ada"}`)
		id := e.enqueue("greet", `{"name":"Bo"}`)
		claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w", Tags: []string{spine.DefaultTag}, Limit: 2})
		if err != nil || len(claimed) != 2 {
			t.Fatalf("claim: %d jobs, %v", len(claimed), err)
		}
		for _, j := range claimed {
			if j.ID == id {
				if err := e.db.(jobSecretsRecorder).SetJobSecrets(t.Context(), spine.Lease{JobID: j.ID, ClaimToken: j.ClaimToken}, []string{"api_key@3", "db_url@1"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		b.get("/w/ws/jobs/"+id.String()).want(200).contains("Secrets", "<code>api_key@3</code>, <code>db_url@1</code>")
		if p := b.get("/w/ws/jobs/" + plain.String()).want(200); strings.Contains(p.body, "job-secrets") {
			t.Fatal("a job that received no secret shows a Secrets line")
		}
	})
}
