package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/windforce/windforce/events"
)

// EventStore is what the live events endpoint reads (DESIGN §9): the
// workspace's outbox. The store core implements it. The stream is woken
// by the spine's own wake-ups (spine.Store's Subscribe and
// SubscribeCompletion of every job), which every enqueue, retry, release
// and completion sends after its commit.
type EventStore interface {
	// EventsAfter is the workspace's events with seq > after, oldest
	// first, at most limit; only events no open transaction can still
	// precede (store.EventsAfter).
	EventsAfter(ctx context.Context, workspace string, after int64, limit int) ([]events.Event, error)
	// RecentEvents is the workspace's newest events, newest first, at
	// most limit (?after=now reads the newest one's seq).
	RecentEvents(ctx context.Context, workspace string, limit int) ([]events.Event, error)
}

// Page sizes of GET …/events.
const (
	DefaultEventsLimit = 100
	MaxEventsLimit     = 500
)

// EventsPage is the answer of GET /api/w/{ws}/events without follow: the
// CloudEvents after the asked seq, oldest first, and where to go on.
type EventsPage struct {
	// Events are CloudEvents 1.0 JSON, each with the extension attribute
	// "seq" (its position in the workspace's outbox).
	Events []json.RawMessage `json:"events"`
	// NextAfter is the ?after= of the next page: the last event's seq, or
	// the asked after when the page is empty, so a poller keeps its place.
	NextAfter int64 `json:"next_after"`
	// More says the page was full: more events are there already.
	More bool `json:"more"`
}

// eventsQuery is GET …/events' parameters.
type eventsQuery struct {
	after int64
	// now asks to start after the newest event (?after=now).
	now    bool
	limit  int
	types  map[string]bool // nil: every type
	follow bool
}

// listEvents answers GET /api/w/{ws}/events: a page of CloudEvents after
// ?after= (default 0, from the oldest kept), or with ?follow=1 a
// server-sent event stream of them (events_follow.go).
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, _ *caller) (any, error) {
	q, err := parseEventsQuery(r.URL.Query())
	if err != nil {
		return nil, err
	}
	ws := r.PathValue("ws")
	if q.now {
		newest, err := s.cfg.Store.RecentEvents(r.Context(), ws, 1)
		if err != nil {
			return nil, fmt.Errorf("read the newest event of workspace %s: %w", ws, err)
		}
		if len(newest) > 0 {
			q.after = newest[0].Seq
		}
	}
	if q.follow {
		return s.followEvents(w, r, q)
	}
	page := EventsPage{Events: []json.RawMessage{}, NextAfter: q.after}
	evs, err := s.cfg.Store.EventsAfter(r.Context(), ws, q.after, q.limit)
	if err != nil {
		return nil, fmt.Errorf("read events of workspace %s: %w", ws, err)
	}
	page.More = len(evs) == q.limit
	for _, ev := range evs {
		page.NextAfter = ev.Seq
		if !q.wants(ev) {
			continue
		}
		b, err := cloudEvent(ev)
		if err != nil {
			return nil, err
		}
		page.Events = append(page.Events, b)
	}
	return page, nil
}

// wants reports whether ev passes the ?type= filter.
func (q eventsQuery) wants(ev events.Event) bool {
	return q.types == nil || q.types[string(ev.Type)]
}

// parseEventsQuery reads after, limit, type (comma list or repeated, with
// or without the "windforce." prefix) and follow.
func parseEventsQuery(v url.Values) (eventsQuery, error) {
	q := eventsQuery{limit: DefaultEventsLimit, follow: flag(v.Get("follow"))}
	if a := v.Get("after"); a == "now" {
		q.now = true
	} else if a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n < 0 {
			return q, badParam("after", a, "want the seq of an event (an integer ≥ 0) or now")
		}
		q.after = n
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > MaxEventsLimit {
			return q, badParam("limit", l, "want an integer from 1 to "+strconv.Itoa(MaxEventsLimit))
		}
		q.limit = n
	}
	for _, list := range v["type"] {
		for _, t := range strings.Split(list, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), events.TypePrefix)
			if t == "" {
				continue
			}
			if !events.Type(t).Valid() {
				return q, badParam("type", t, "want one of "+strings.Join(typeNames(), ", "))
			}
			if q.types == nil {
				q.types = map[string]bool{}
			}
			q.types[t] = true
		}
	}
	return q, nil
}

// typeNames lists the event types for error messages.
func typeNames() []string {
	names := make([]string, 0, len(events.Types))
	for _, t := range events.Types {
		names = append(names, string(t))
	}
	return names
}

// SeqEvent is a CloudEvent as the live endpoint answers it: with the
// extension attribute "seq", its position in the workspace's outbox, so a
// reader of a page or a stream knows where it is. Sinks get the event
// without it (events.Event.Encode).
type SeqEvent struct {
	events.CloudEvent
	Seq int64 `json:"seq"`
}

// cloudEvent is ev as a SeqEvent's JSON.
func cloudEvent(ev events.Event) (json.RawMessage, error) {
	b, err := json.Marshal(SeqEvent{CloudEvent: ev.CloudEvent(), Seq: ev.Seq})
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	return b, nil
}
