package storetest

import (
	"testing"

	"github.com/windforce/windforce/spine"
)

// testUnsafeText checks that what a job prints or throws is stored even
// when it holds NUL or invalid UTF-8 (Postgres text and jsonb refuse both):
// it is made safe with U+FFFD instead of failing the write and losing the
// outcome.
func testUnsafeText(t *testing.T, newStore newStoreFunc) {
	t.Parallel()
	b := setup(t, newStore)
	b.enqueue()
	c := b.claimOne(b.clock.Now())
	b.appendLog(lease(c), "a\x00b\xffc", b.clock.Now())
	if got := b.logs(c.ID, 0); len(got) != 1 || got[0].Data != "a\uFFFDb\uFFFDc" {
		t.Fatalf("stored log %+v, want NUL and the bad byte replaced", got)
	}
	if _, err := b.store.Fail(b.ctx, spine.FailParams{Lease: lease(c), Now: b.clock.Now(),
		Error: spine.JobError{Message: "bad\x00news\xfe", Stack: "at \x00 line 1"}}); err != nil {
		t.Fatalf("Fail with NUL in the message: %v", err)
	}
	job := b.requireStatus(c.ID, spine.StatusFailure, "after Fail")
	if job.Error == nil || job.Error.Message != "bad\uFFFDnews\uFFFD" || job.Error.Stack != "at \uFFFD line 1" {
		t.Fatalf("stored error %+v, want the unsafe characters replaced", job.Error)
	}
}
