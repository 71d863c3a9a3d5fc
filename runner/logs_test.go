package runner

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// memLogs is a spine.Store that keeps appended logs in memory; the other
// methods are not used by logSink.
type memLogs struct {
	spine.Store
	mu     sync.Mutex
	chunks []string
}

func (m *memLogs) AppendLog(_ context.Context, p spine.AppendLogParams) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.chunks = append(m.chunks, p.Data)
	return nil
}

func (m *memLogs) text() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.chunks, "")
}

func newTestSink(limit int64, token string) (*logSink, *memLogs) {
	store := &memLogs{}
	cfg := Config{Store: store, MaxLogBytes: limit, LogFlushInterval: time.Millisecond}
	fillDefaults(&cfg)
	return newLogSink(cfg, spine.Lease{JobID: uuid.New(), ClaimToken: uuid.New()}, newMasker(token, nil)), store
}

// TestLogSinkCapsWithBoundedMemory writes 64 MiB through a sink capped at
// 1 MiB: the stored log is the cap plus one marker, and the sink's buffer
// never grows past the cap.
func TestLogSinkCapsWithBoundedMemory(t *testing.T) {
	t.Parallel()
	const limit = 1 << 20
	sink, store := newTestSink(limit, "")
	chunk := []byte(strings.Repeat("z", 32<<10))
	for range (64 << 20) / len(chunk) {
		if _, err := sink.Write(chunk); err != nil {
			t.Fatal(err)
		}
		sink.mu.Lock()
		c := cap(sink.buf)
		sink.mu.Unlock()
		if c > 2*limit {
			t.Fatalf("sink buffer grew to %d bytes", c)
		}
	}
	tail := sink.Close()
	got := store.text() + tail
	if !strings.HasSuffix(strings.TrimSpace(got), "further output dropped]") || strings.Count(got, "log truncated") != 1 {
		t.Fatalf("no single truncation marker at the end: ...%s", got[max(0, len(got)-200):])
	}
	if n := strings.Count(got, "z"); n != limit {
		t.Fatalf("stored %d bytes of output, want the cap %d", n, limit)
	}
}

// TestLogSinkMasksTokenAcrossChunks feeds the token one byte at a time
// around flushes and splits a UTF-8 character: the token never reaches the
// store and the text stays valid.
func TestLogSinkMasksTokenAcrossChunks(t *testing.T) {
	t.Parallel()
	token := "wf1.secret-token-value.sig"
	sink, store := newTestSink(1<<20, token)
	input := "before " + token + " middle é " + token + " after\xff\n"
	for i := 0; i < len(input); i++ {
		_, _ = sink.Write([]byte{input[i]})
		if i%3 == 0 {
			sink.flush()
		}
	}
	tail := sink.Close()
	got := store.text() + tail
	if strings.Contains(got, "secret-token") {
		t.Fatalf("token leaked: %q", got)
	}
	if want := "before [WF_TOKEN] middle é [WF_TOKEN] after\uFFFD\n"; got != want {
		t.Fatalf("stored %q, want %q", got, want)
	}
	for _, c := range append(store.chunks, tail) {
		if !utf8.ValidString(c) {
			t.Fatalf("chunk %q is not valid UTF-8", c)
		}
	}
}

// TestLogSinkMasksTokenCutByCap: when the cap falls inside the token, the
// start of the token is not stored (no mask could match it).
func TestLogSinkMasksTokenCutByCap(t *testing.T) {
	t.Parallel()
	token := "wf1.secret-token-value.sig"
	for _, split := range []bool{false, true} {
		sink, store := newTestSink(20, token)
		if split { // the cap is reached exactly inside the token, then more comes
			_, _ = sink.Write([]byte("0123456789wf1.secre"))
			sink.flush()
			_, _ = sink.Write([]byte("t-token-value.sig and more"))
		} else {
			_, _ = sink.Write([]byte("0123456789" + token + " and more"))
		}
		tail := sink.Close()
		got := store.text() + tail
		if strings.Contains(got, "wf1.") || !strings.HasPrefix(got, "0123456789\n[windforce: log truncated") {
			t.Fatalf("split %v: stored %q", split, got)
		}
	}
}

// TestLastLineMasksTokenBeforeCut: a failure message built from the last
// line never holds part of the token, whether the 200-byte cut or the
// tail buffer's cut falls inside it.
func TestLastLineMasksTokenBeforeCut(t *testing.T) {
	t.Parallel()
	token := "wf1." + strings.Repeat("T", 150) + ".sig"
	sink, _ := newTestSink(1<<20, token)
	defer sink.Close()
	_, _ = sink.Write([]byte("first\n" + strings.Repeat("x", 150) + " " + token + "\n"))
	if got := sink.LastLine(); strings.Contains(got, "TTT") || !strings.Contains(got, tokenMask) {
		t.Fatalf("last line %q", got)
	}
	// A line longer than the tail buffer, cut inside the token.
	_, _ = sink.Write([]byte(strings.Repeat("y", 2000) + token + strings.Repeat("z", 1024-20) + "\n"))
	if got := sink.LastLine(); strings.Contains(got, "TTT") || strings.Contains(got, ".sig") || !strings.HasPrefix(got, "zzz") {
		t.Fatalf("last line %q", got)
	}
}
