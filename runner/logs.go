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

// tokenMask replaces WF_TOKEN in stored logs.
const tokenMask = "[WF_TOKEN]"

// logSink streams a job's output to job_logs: it buffers what the process
// writes and appends it in chunks every flush interval (so logs are
// readable live) from its own goroutine (so a slow database never blocks
// the heartbeats, which run elsewhere). A chunk whose append fails is kept
// and tried again with the next one. What is left when the job ends is not
// appended here: Close returns it as the tail, which the worker writes in
// the transaction of the job's outcome, so a job never finishes with the
// end of its logs missing. It accepts at most MaxLogBytes and then writes
// one visible truncation marker; memory stays bounded by the cap. WF_TOKEN
// is masked, invalid UTF-8 is made safe.
type logSink struct {
	store    spine.Store
	log      *slog.Logger
	lease    spine.Lease
	limit    int64
	token    string
	interval time.Duration

	mu        sync.Mutex
	buf       []byte
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

func newLogSink(cfg Config, lease spine.Lease, token string) *logSink {
	s := &logSink{
		store: cfg.Store, log: cfg.Logger, lease: lease, limit: cfg.MaxLogBytes, token: token,
		interval: cfg.LogFlushInterval,
		tail:     tailBuffer{max: 1024},
		kick:     make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
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
	// The cap may have cut the token: its start would be stored with the
	// marker after it, where no mask matches it. flush holds back any
	// such start, so all of it is still in buf.
	s.buf = s.buf[:len(s.buf)-tokenStart(string(s.buf), s.token)]
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
// the start of the token or of a split UTF-8 character, so neither is
// broken across two chunks. A chunk the store did not take goes back in
// front of the buffer: it is retried at the next tick, or is part of the
// tail. Only a lost lease drops output (nothing more is written for the
// job).
func (s *logSink) flush() {
	s.mu.Lock()
	if s.lost || len(s.buf) == 0 {
		s.mu.Unlock()
		return
	}
	text := s.masked()
	keep := holdBack(text, s.token)
	chunk := text[:len(text)-keep]
	s.buf = append(s.buf[:0], text[len(text)-keep:]...)
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
			s.buf = append([]byte(chunk), s.buf...)
		}
		s.mu.Unlock()
	}
}

// masked is the buffer with the token masked. Callers hold mu.
func (s *logSink) masked() string {
	text := string(s.buf)
	if s.token != "" {
		text = strings.ReplaceAll(text, s.token, tokenMask)
	}
	return text
}

func (s *logSink) append(chunk string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return s.store.AppendLog(ctx, spine.AppendLogParams{Lease: s.lease, Data: spine.SafeText(chunk)})
}

// holdBack is how many trailing bytes of text to keep for the next chunk:
// an incomplete UTF-8 character, or a tail that is the start of the token.
func holdBack(text, token string) int {
	keep := 0
	for i := 1; i <= utf8.UTFMax && i <= len(text); i++ {
		if utf8.RuneStart(text[len(text)-i]) {
			if !utf8.FullRuneInString(text[len(text)-i:]) {
				keep = i
			}
			break
		}
	}
	return max(keep, tokenStart(text, token))
}

// tokenStart is the length of the longest tail of text that is the start
// of token (not all of it), 0 when none is.
func tokenStart(text, token string) int {
	for k := min(len(token)-1, len(text)); k > 0; k-- {
		if strings.HasSuffix(text, token[:k]) {
			return k
		}
	}
	return 0
}

// tokenEnd is the length of the longest head of text that is the end of
// token (not all of it), 0 when none is.
func tokenEnd(text, token string) int {
	for k := min(len(token)-1, len(text)); k > 0; k-- {
		if strings.HasPrefix(text, token[len(token)-k:]) {
			return k
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
		if !s.lost && len(s.buf) > 0 {
			s.tailText = spine.SafeText(s.masked())
		}
		s.buf = nil
	})
	return s.tailText
}

// LastLine is the last non-empty line of the process output, cut to 200
// bytes, for the message of a failed exit. The token is masked before the
// cut, which could otherwise keep its start where no mask matches; a line
// that begins where the tail buffer was cut loses any end of a token it
// begins with.
func (s *logSink) LastLine() string {
	s.mu.Lock()
	text, cut := string(s.tail.buf), s.tail.cut
	s.mu.Unlock()
	if cut && s.token != "" {
		text = text[tokenEnd(text, s.token):]
	}
	if s.token != "" {
		text = strings.ReplaceAll(text, s.token, tokenMask)
	}
	text = strings.TrimRight(text, "\r\n\t ")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return spine.SafeText(text)
}
