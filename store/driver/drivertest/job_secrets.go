package drivertest

import (
	"slices"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("JobSecrets", testJobSecrets)

// testJobSecrets checks driver.JobSecretsExecutor: the owner records what
// its job received, a lost lease writes nothing, a later attempt's record
// replaces the first, and the job keeps it once finished.
func testJobSecrets(t *testing.T, open Open) {
	t.Run("SetAndRead", func(t *testing.T) { testJobSecretsSetAndRead(t, open) })
}

func testJobSecretsSetAndRead(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	id := qEnqueue(t, ex, "ws", "a")
	if got := getJob(t, ex, id).Secrets; got != nil {
		t.Fatalf("a new job reads secrets %q, want none", got)
	}
	j := qClaim(t, ex, "a", 1)[0]
	qNotOwner(t, "JobSetSecrets", ex.JobSetSecrets(t.Context(), qLost(j), []string{"x@1"}))
	if got := getJob(t, ex, id).Secrets; got != nil {
		t.Fatalf("a lost lease wrote secrets %q", got)
	}
	if err := ex.JobSetSecrets(t.Context(), qLease(j), []string{"a@1", "b@3"}); err != nil {
		t.Fatalf("JobSetSecrets: %v", err)
	}
	if got := getJob(t, ex, id).Secrets; !slices.Equal(got, []string{"a@1", "b@3"}) {
		t.Fatalf("secrets %q, want [a@1 b@3]", got)
	}
	// The attempt fails and is retried: its second claim records anew.
	err := ex.Requeue(t.Context(), driver.Requeue{Lease: qLease(j), AttemptStep: 1, ScheduledFor: qBase})
	if err != nil {
		t.Fatalf("Requeue: %v", err)
	}
	qNotOwner(t, "JobSetSecrets of a waiting job", ex.JobSetSecrets(t.Context(), qLease(j), []string{"x@1"}))
	j2 := qClaim(t, ex, "a", 1)[0]
	if err := ex.JobSetSecrets(t.Context(), qLease(j2), []string{"a@2"}); err != nil {
		t.Fatalf("JobSetSecrets of the second attempt: %v", err)
	}
	if _, err := ex.Complete(t.Context(), driver.Completion{Lease: qLease(j2), Status: spine.StatusSuccess, Now: qBase.Add(time.Second)}); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if got := getJob(t, ex, id); got.Status != spine.StatusSuccess || !slices.Equal(got.Secrets, []string{"a@2"}) {
		t.Fatalf("finished job %s with secrets %q, want success with [a@2]", got.Status, got.Secrets)
	}
	qNotOwner(t, "JobSetSecrets of a finished job", ex.JobSetSecrets(t.Context(), qLease(j2), nil))
}
