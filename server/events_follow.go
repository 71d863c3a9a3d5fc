package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/spine"
)

// followEvents streams the workspace's events as server-sent events: each
// is "id: <seq>" and one "data:" line holding the CloudEvent JSON (no
// "event:" line, so a browser's EventSource hands it to onmessage).
// Last-Event-ID (a reconnect) wins over ?after=. The first event is
// "event: ready" with the seq it starts after. The stream is woken by
// the spine's wake-ups (streamEvents says which, and how it polls). It
// ends when the client goes away or its token stops being allowed.
func (s *Server) followEvents(w http.ResponseWriter, r *http.Request, q eventsQuery) (any, error) {
	if r.Header.Get("Last-Event-ID") != "" {
		after, err := lastEventID(r)
		if err != nil {
			return nil, err
		}
		q.after = after
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx would otherwise hold events back
	w.WriteHeader(http.StatusOK)
	st := &sseStream{w: w, rc: http.NewResponseController(w)}
	// "ready" says where the stream starts (?after=now resolved): its id
	// is what a reconnect sends back, so nothing in between is missed.
	at := strconv.FormatInt(q.after, 10)
	st.write("id: " + at + "\nevent: ready\ndata: {\"after\":" + at + "}\n\n")
	if err := st.flush(); err != nil {
		return streamed{}, nil
	}
	recheck := func() error {
		c, err := s.authenticate(r)
		if err == nil {
			err = s.authorize(r, c, route{action: auth.ActionRead})
		}
		return err
	}
	if err := s.streamEvents(r.Context(), st, r.PathValue("ws"), q, recheck); err != nil && r.Context().Err() == nil {
		s.log.Warn("event stream ended early", "workspace", r.PathValue("ws"), "err", err)
	}
	return streamed{}, nil
}

// How a woken events stream reads until the event shows (streamEvents).
const (
	// eventSettleWindow bounds the quick re-reads after a wake-up that the
	// read did not answer yet.
	eventSettleWindow = 5 * time.Second
	// eventSettleFirst and eventSettleMax are the first and the longest
	// wait between those re-reads (doubling).
	eventSettleFirst = 20 * time.Millisecond
	eventSettleMax   = 500 * time.Millisecond
)

// streamEvents sends the events after q.after until ctx ends, a write
// fails or recheck refuses the caller. It subscribes to the wake-ups
// before its first read, so events committed meanwhile wake it.
//
// On Postgres an event is readable only once every transaction open at
// its commit has ended (the outbox's final prefix, store.EventsAfter), so
// a read right after a wake-up may not show it yet: the stream then reads
// again after 20 ms, doubling to 500 ms, for up to 5 s. Claims send no
// wake-up, so besides, it polls: every FollowPoll after an event,
// stretching by half each quiet read to followPollGrowth × FollowPoll.
func (s *Server) streamEvents(ctx context.Context, st *sseStream, ws string, q eventsQuery, recheck func() error) error {
	queued, stopQueued := s.cfg.Store.Subscribe(nil)
	defer stopQueued()
	finished, stopFinished := s.cfg.Store.SubscribeCompletion(uuid.Nil)
	defer stopFinished()
	poll := time.NewTimer(s.cfg.FollowPoll)
	defer poll.Stop()
	idle := time.NewTimer(followKeepalive)
	defer idle.Stop()
	check := time.NewTicker(followRecheck)
	defer check.Stop()
	interval, settle := s.cfg.FollowPoll, time.Duration(0)
	var woken time.Time // a wake-up no read has answered yet; zero: none
	for {
		_ = st.rc.SetWriteDeadline(time.Now().Add(followWriteTimeout))
		sent, err := s.sendNewEvents(ctx, st, ws, &q)
		if err != nil {
			return err
		}
		wait := interval
		switch {
		case sent:
			idle.Reset(followKeepalive)
			interval, woken = s.cfg.FollowPoll, time.Time{}
			wait = interval
		case !woken.IsZero() && time.Since(woken) < eventSettleWindow:
			settle = min(max(2*settle, eventSettleFirst), eventSettleMax)
			wait = min(settle, interval)
		default:
			woken = time.Time{}
			interval = min(interval*3/2, followPollGrowth*s.cfg.FollowPoll)
			wait = interval
		}
		if err := st.flush(); err != nil {
			return err
		}
		poll.Reset(wait)
		w, err := awaitEvents(ctx, st, queued, finished, poll, idle, check, recheck)
		if err != nil {
			return err
		}
		if w && woken.IsZero() {
			woken, settle = time.Now(), 0
		}
	}
}

// awaitEvents waits until the stream should read again: a wake-up (woken
// true) or the poll. Meanwhile it re-checks the caller and sends
// keepalives, as awaitFollow does for logs.
func awaitEvents(ctx context.Context, st *sseStream, queued <-chan struct{}, finished <-chan spine.Finished, poll, idle *time.Timer,
	check *time.Ticker, recheck func() error) (woken bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-queued:
			return true, nil
		case <-finished:
			return true, nil
		case <-poll.C:
			return false, nil
		case <-check.C:
			if err := recheck(); err != nil {
				return false, fmt.Errorf("caller no longer allowed: %w", err)
			}
		case <-idle.C:
			_ = st.rc.SetWriteDeadline(time.Now().Add(followWriteTimeout))
			st.comment("keepalive")
			if err := st.flush(); err != nil {
				return false, err
			}
			idle.Reset(followKeepalive)
		}
	}
}

// sendNewEvents sends every event after q.after, a page at a time, and
// moves q.after past them (filtered-out ones too). It reports whether it
// sent any.
func (s *Server) sendNewEvents(ctx context.Context, st *sseStream, ws string, q *eventsQuery) (bool, error) {
	sent := false
	for {
		evs, err := s.cfg.Store.EventsAfter(ctx, ws, q.after, q.limit)
		if err != nil {
			return sent, fmt.Errorf("read events: %w", err)
		}
		for _, ev := range evs {
			q.after = ev.Seq
			if !q.wants(ev) {
				continue
			}
			b, err := cloudEvent(ev)
			if err != nil {
				return sent, err
			}
			// CloudEvents JSON from encoding/json holds no raw line break.
			st.write("id: " + strconv.FormatInt(ev.Seq, 10) + "\ndata: " + string(b) + "\n\n")
			sent = true
		}
		if len(evs) < q.limit {
			return sent, nil
		}
		if err := st.flush(); err != nil {
			return sent, err
		}
	}
}
