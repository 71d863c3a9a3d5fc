package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/spine"
)

// How GET …/logs?follow=1 paces itself (Config.FollowPoll sets how often
// a live job's logs are read).
const (
	// followPollGrowth is how much slower a quiet job's logs are read
	// at most: every FollowPoll after output, stretching by half each
	// quiet read, down to every followPollGrowth × FollowPoll.
	followPollGrowth = 10
	// followWriteTimeout bounds each write: a client that stops reading
	// while keeping its connection open cannot hold the handler forever.
	followWriteTimeout = 30 * time.Second
	// followKeepalive is the idle time after which a comment line is
	// sent, so proxies and clients keep the connection open.
	followKeepalive = 15 * time.Second
)

// followRecheck is how often a stream checks its caller's token again, so
// a revoked token (or a WF_TOKEN whose claim ended) stops streaming. A
// variable so tests can shorten it.
var followRecheck = 10 * time.Second

// streamed is what a handler returns once it has written the response
// itself (a server-sent event stream); respond writes nothing more.
type streamed struct{}

// followRequested reports whether GET …/logs asks to stream (?follow=1).
func followRequested(r *http.Request) bool { return flag(r.URL.Query().Get("follow")) }

// followLogs streams job j's logs as server-sent events: each chunk is
// "id: <seq>", "event: log" and one "data:" line per line of the chunk.
// Last-Event-ID resumes after that seq. While the job is live its logs are
// read every FollowPoll (less often while it is quiet), with a keepalive
// comment after followKeepalive of silence; its completion wakes the
// stream at once (Store's SubscribeCompletion). Once it has finished, the
// remaining chunks are sent, then "event: end" with {"status"}, and the
// stream closes. The client going away ends the handler through the
// request's context.
func (s *Server) followLogs(w http.ResponseWriter, r *http.Request, j spine.Job) (any, error) {
	after, err := lastEventID(r)
	if err != nil {
		return nil, err
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx would otherwise hold events back
	w.WriteHeader(http.StatusOK)
	st := &sseStream{w: w, rc: http.NewResponseController(w)}
	if err := st.flush(); err != nil {
		return streamed{}, nil
	}
	recheck := func() error {
		c, err := s.authenticate(r)
		if err == nil {
			err = s.authorize(r, c, route{action: auth.ActionRead, job: jobSelf})
		}
		return err
	}
	if err := s.streamLogs(r.Context(), st, j, after, recheck); err != nil && r.Context().Err() == nil {
		s.log.Warn("log stream ended early", "job", j.ID, "err", err)
	}
	return streamed{}, nil
}

// streamLogs sends chunks after seq until the job has finished and its
// last chunk is sent, ctx ends, or recheck refuses the caller. It
// subscribes to the job's completion before its first read, so an end
// committed meanwhile wakes it; the log poll is the fallback.
func (s *Server) streamLogs(ctx context.Context, st *sseStream, j spine.Job, after int64, recheck func() error) error {
	done, stop := s.cfg.Store.SubscribeCompletion(j.ID)
	defer stop()
	poll := time.NewTimer(s.cfg.FollowPoll)
	defer poll.Stop()
	idle := time.NewTimer(followKeepalive)
	defer idle.Stop()
	check := time.NewTicker(followRecheck)
	defer check.Stop()
	interval := s.cfg.FollowPoll
	for {
		// A stream lasts as long as the job, so a server-wide write
		// timeout must not cut it; each write gets its own instead.
		// Servers without deadlines answer ErrNotSupported.
		_ = st.rc.SetWriteDeadline(time.Now().Add(followWriteTimeout))
		sent, finished, err := s.sendNewLogs(ctx, st, j, &after)
		if err != nil || finished {
			return err
		}
		if sent {
			interval = s.cfg.FollowPoll
			idle.Reset(followKeepalive)
		} else {
			interval = min(interval*3/2, followPollGrowth*s.cfg.FollowPoll)
		}
		if err := st.flush(); err != nil {
			return err
		}
		poll.Reset(interval)
		if err := awaitFollow(ctx, st, done, poll, idle, check, recheck); err != nil {
			return err
		}
	}
}

// sendNewLogs reads the job's status, then its chunks after *after, and
// sends them; once the status is terminal it sends the end event too and
// flushes. Status first, logs second: completion writes the last logs in
// the same transaction as the status, so after a finished status the logs
// read next are complete.
func (s *Server) sendNewLogs(ctx context.Context, st *sseStream, j spine.Job, after *int64) (sent, finished bool, err error) {
	cur, err := s.cfg.Store.GetJob(ctx, j.Workspace, j.ID)
	if err != nil {
		return false, false, fmt.Errorf("read job: %w", err)
	}
	chunks, err := s.cfg.Store.Logs(ctx, j.ID, *after)
	if err != nil {
		return false, false, fmt.Errorf("read logs: %w", err)
	}
	for _, c := range chunks {
		st.logEvent(c)
		*after = c.Seq
	}
	if cur.Status.Terminal() {
		end, _ := json.Marshal(map[string]string{"status": string(cur.Status)})
		st.event("end", "", string(end))
		return len(chunks) > 0, true, st.flush()
	}
	return len(chunks) > 0, false, nil
}

// awaitFollow waits until the stream should read again: the job's
// completion wake-up or the log poll. Meanwhile it re-checks the caller
// every followRecheck and sends a keepalive comment after followKeepalive
// of silence.
func awaitFollow(ctx context.Context, st *sseStream, done <-chan spine.Finished, poll, idle *time.Timer, check *time.Ticker, recheck func() error) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			return nil
		case <-poll.C:
			return nil
		case <-check.C:
			if err := recheck(); err != nil {
				return fmt.Errorf("caller no longer allowed: %w", err)
			}
		case <-idle.C:
			_ = st.rc.SetWriteDeadline(time.Now().Add(followWriteTimeout))
			st.comment("keepalive")
			if err := st.flush(); err != nil {
				return err
			}
			idle.Reset(followKeepalive)
		}
	}
}

// lastEventID reads the Last-Event-ID header: the seq of the last chunk
// the client has; 0 (from the start) when absent.
func lastEventID(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get("Last-Event-ID"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errorf(http.StatusBadRequest, CodeBadRequest, "Last-Event-ID %q: want the id (a log seq) of a previous event", v)
	}
	return n, nil
}

// sseStream writes server-sent events. Write errors are remembered and
// reported by flush: a client that went away shows up there.
type sseStream struct {
	w   io.Writer
	rc  *http.ResponseController
	err error
}

func (st *sseStream) write(s string) {
	if st.err == nil {
		_, st.err = io.WriteString(st.w, s)
	}
}

// logEvent sends one chunk as an "event: log" with its seq as the id.
func (st *sseStream) logEvent(c spine.LogChunk) {
	st.event("log", strconv.FormatInt(c.Seq, 10), c.Data)
}

// event sends one event. A line break in data (\n, \r\n or \r: all three
// end a line in the SSE format) starts a new data line, so the client
// joins the lines back with \n; a lone \r therefore arrives as \n.
func (st *sseStream) event(name, id, data string) {
	var b strings.Builder
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("event: " + name + "\n")
	data = strings.ReplaceAll(data, "\r\n", "\n")
	data = strings.ReplaceAll(data, "\r", "\n")
	for _, line := range strings.Split(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	st.write(b.String())
}

// comment sends an SSE comment line, which clients ignore.
func (st *sseStream) comment(text string) { st.write(": " + text + "\n\n") }

// flush pushes what was written to the client.
func (st *sseStream) flush() error {
	if st.err != nil {
		return st.err
	}
	st.err = st.rc.Flush()
	return st.err
}
