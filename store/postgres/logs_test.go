package postgres

import (
	"context"
	"testing"
)

// Process output that a text column refuses (NUL, invalid UTF-8) is
// stored with replacement characters instead of failing the append.
func TestAppendLogCleansUnstorableText(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	enqueue(t, s, job("default"))
	c := claimOne(t, s, "default", claimNow())
	err := s.AppendLog(ctx, appendParams(c, "a\x00b\xffc"))
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	chunks, err := s.Logs(ctx, c.ID, 0)
	if err != nil || len(chunks) != 1 {
		t.Fatalf("logs: %v %v", chunks, err)
	}
	if want := "a\uFFFDb\uFFFDc"; chunks[0].Data != want || chunks[0].Seq != 1 {
		t.Fatalf("chunk %q seq %d, want %q seq 1", chunks[0].Data, chunks[0].Seq, want)
	}
}
