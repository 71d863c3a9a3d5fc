package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/windforce/windforce/spine"
)

// flushBytes is the buffered size that triggers a flush before the tick.
const flushBytes = 32 << 10

// logSink streams a job's output to job_logs: it buffers what the process
// writes and appends it in chunks every flush interval (so logs are
// readable live) from its own goroutine (so a slow database never blocks
// the heartbeats, which run elsewhere). A chunk whose append fails is kept
// and tried again with the next one. What is left when the job ends is not
// appended here: Close returns it as the tail, which the worker writes in
// the transaction of the job's outcome, so a job never finishes with the
// end of its logs missing. It accepts at most MaxLogBytes and then writes
// one visible truncation marker; memory stays bounded by the cap. The
// job's WF_TOKEN and secret values are masked (masker), also when a job
// writes one in pieces: a tail that may begin one is held back until what
// follows tells. Invalid UTF-8 is made safe.
type logSink struct {
	store    spine.Store
	log      *slog.Logger
	lease    spine.Lease
	limit    int64
	mask     *masker
	interval time.Duration

	mu sync.Mutex
	// buf is raw output not masked yet; unsent is masked text whose
	// append failed, sent first next time (never masked twice: a value
	// may occur inside a mask's own text).
	buf       []byte
	unsent    string
	accepted  int64
	truncated bool
	lost      bool // the lease is gone: drop everything
	tail      tailBuffer

	kick      chan struct{}
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	tailText  string // what Close returns
}

func newLogSink(cfg Config, lease spine.Lease, mask *masker) *logSink {
	s := &logSink{
		store: cfg.Store, log: cfg.Logger, lease: lease, limit: cfg.MaxLogBytes, mask: mask,
		interval: cfg.LogFlushInterval,
		// The last line's tail keeps room for the longest value: LastLine
		// drops as much at a cut head, which may hold a value's end.
		tail: tailBuffer{max: lastLineBytes + mask.longestNeedle()},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go s.loop()
	return s
}

// Write takes process output; past the cap it is counted and dropped.
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	_, _ = s.tail.Write(p)
	room := s.limit - s.accepted
	switch {
	case room <= 0:
		s.markTruncated()
	case int64(len(p)) > room:
		s.buf = append(s.buf, p[:room]...)
		s.accepted += room
		s.markTruncated()
	default:
		s.buf = append(s.buf, p...)
		s.accepted += int64(len(p))
	}
	full := len(s.buf) >= flushBytes
	s.mu.Unlock()
	if full {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// markTruncated appends the truncation marker once. Callers hold mu.
func (s *logSink) markTruncated() {
	if s.truncated {
		return
	}
	s.truncated = true
	// The cap may have cut a value: its start would be stored with the
	// marker after it, where no mask matches it. flush holds back any
	// such start, so all of it is still in buf.
	s.buf = s.buf[:len(s.buf)-s.mask.pending(string(s.buf))]
	s.buf = append(s.buf, fmt.Sprintf("\n[windforce: log truncated: more than %d bytes (WINDFORCE_MAX_LOG_BYTES); further output dropped]\n", s.limit)...)
}

// System writes a line of the worker's own about the job (not counted
// against the cap, so a failure reason is always visible).
func (s *logSink) System(msg string) {
	s.mu.Lock()
	s.buf = append(s.buf, "[windforce] "+strings.TrimRight(msg, "\n")+"\n"...)
	s.mu.Unlock()
}

// Fail logs err (with installer output when it carries some) and returns
// it, for the handler's early exits.
func (s *logSink) Fail(err error) error {
	if ie, ok := isInstallError(err); ok && ie.Output != "" {
		s.System(ie.Command + " output:\n" + ie.Output)
	}
	s.System(err.Error())
	return err
}

func (s *logSink) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return // what is left is the tail (Close)
		case <-t.C:
		case <-s.kick:
		}
		s.flush()
	}
}

// flush appends the buffered output. It holds back a tail that could be
// the start of a masked value or of a split UTF-8 character, so neither
// is broken across two chunks (masker.cut). A chunk the store did not
// take is kept in front: it is retried at the next tick, or is part of
// the tail. Only a lost lease drops output (nothing more is written for
// the job).
func (s *logSink) flush() {
	s.mu.Lock()
	if s.lost || (len(s.buf) == 0 && s.unsent == "") {
		s.mu.Unlock()
		return
	}
	raw := string(s.buf)
	head, rest := s.mask.cut(raw, splitRune(raw))
	chunk := s.unsent + head
	s.unsent = ""
	s.buf = append(s.buf[:0], rest...)
	s.mu.Unlock()
	if chunk == "" {
		return
	}
	if err := s.append(chunk); err != nil {
		s.log.Warn("appending job logs failed; kept for the next chunk", "job", s.lease.JobID, "err", err)
		s.mu.Lock()
		if errors.Is(err, spine.ErrNotOwner) {
			s.lost = true
			s.buf = s.buf[:0]
		} else {
			s.unsent = chunk
		}
		s.mu.Unlock()
	}
}

func (s *logSink) append(chunk string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.store.AppendLog(ctx, spine.AppendLogParams{Lease: s.lease, Data: spine.SafeText(chunk)})
}

// splitRune is the length of an incomplete UTF-8 character at the end of
// text, 0 when there is none.
func splitRune(text string) int {
	for i := 1; i <= utf8.UTFMax && i <= len(text); i++ {
		if utf8.RuneStart(text[len(text)-i]) {
			if !utf8.FullRuneInString(text[len(text)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// Close stops the flusher and returns the tail: the output not appended
// yet (masked, safe text), for the worker to write with the job's outcome
// (spine.ClaimedJob.LogTail). Empty when the lease was lost. Later calls
// return the same tail.
func (s *logSink) Close() string {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.done
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.lost && (len(s.buf) > 0 || s.unsent != "") {
			s.tailText = s.unsent + spine.SafeText(s.mask.text(string(s.buf)))
		}
		s.buf, s.unsent = nil, ""
	})
	return s.tailText
}

// lastLineBytes is how much of the output's end LastLine looks at.
const lastLineBytes = 1024

// LastLine is the last non-empty line of the process output, cut to 200
// bytes, for the message of a failed exit. Values are masked before the
// cut, which could otherwise keep a value's start where no mask matches
// it; when the kept output begins inside what was cut, its head that may
// be the end of a value whose start is gone is dropped (masker.cutHead).
func (s *logSink) LastLine() string {
	s.mu.Lock()
	text, cut := string(s.tail.buf), s.tail.cut
	s.mu.Unlock()
	if cut {
		text = text[s.mask.cutHead(text):]
	}
	text = s.mask.text(text)
	text = strings.TrimRight(text, "\r\n\t ")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return spine.SafeText(text)
}
