package postgres

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/store/driver"
)

// The events outbox's reads (queries/events_*.sql).
var (
	qEventsHorizon = mustQuery("events_horizon")
	qEventsAfter   = mustQuery("events_after")
)

// EventsAfter reads the final events after seq after, in seq order
// (driver.EventExecutor).
//
// A seq is handed out when its transaction inserts the event, not when
// it commits: transaction A may take seq 10, B seq 11, and B commit
// first. A reader that saw 11 and went on from there would never see 10.
// So the driver answers only up to a horizon below which every seq is
// final (committed or rolled back for good): see eventHorizon.
func (e *executor) EventsAfter(ctx context.Context, workspace string, after int64, limit int) ([]events.Event, error) {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	var s horizonSample
	var xmin int64
	if err := e.q.QueryRow(ctx, qEventsHorizon).Scan(&s.lastSeq, &s.xmax, &xmin); err != nil {
		return nil, translate(err)
	}
	upto := e.d.horizon.final(s, xmin)
	if upto <= after {
		return nil, nil
	}
	rows, err := e.q.Query(ctx, qEventsAfter, namedArgs{
		"workspace": workspace, "after": after, "upto": upto, "limit": limit,
	})
	if err != nil {
		return nil, translate(err)
	}
	evs, err := pgx.CollectRows(rows, scanEvent)
	if err != nil {
		return nil, translate(err)
	}
	return evs, nil
}

// horizonSample is one reading of events_horizon.sql: the last seq handed
// out then, and the first xid not yet assigned then.
type horizonSample struct {
	lastSeq int64
	xmax    int64
}

// maxHorizonSamples bounds the samples an eventHorizon keeps while a long
// transaction holds xmin back.
const maxHorizonSamples = 64

// eventHorizon finds the final prefix of event_outbox from samples taken
// by this process's reads. Every seq up to a sample's lastSeq was taken by
// a transaction whose xid is below the sample's xmax (its state change
// assigned the xid before the event's insert drew the seq). When a later
// snapshot's xmin is at or past that xmax, every such transaction has
// ended, so the seqs up to lastSeq are final. A reader thus sees an event
// at its second read after the commit at the latest (the first when no
// write transaction is open); an open transaction holds events back until
// it ends, never loses them.
type eventHorizon struct {
	mu sync.Mutex
	// samples are pending ones, oldest first (lastSeq and xmax never go
	// down); safe is the final prefix found so far.
	samples []horizonSample
	safe    int64
}

// final records the sample s, taken with a snapshot whose xmin is xmin,
// and answers the highest seq known final.
func (h *eventHorizon) final(s horizonSample, xmin int64) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.xmax <= xmin {
		// No transaction was running: everything handed out is final.
		h.samples = h.samples[:0]
		h.safe = max(h.safe, s.lastSeq)
		return h.safe
	}
	done := 0
	for _, p := range h.samples {
		if p.xmax > xmin {
			break
		}
		h.safe = max(h.safe, p.lastSeq)
		done++
	}
	h.samples = append(h.samples[:0], h.samples[done:]...)
	switch n := len(h.samples); {
	case n > 0 && h.samples[n-1].lastSeq == s.lastSeq:
		// Nothing handed out since: the older sample becomes final first.
	case n == maxHorizonSamples:
		h.samples[n-1] = s
	default:
		h.samples = append(h.samples, s)
	}
	return h.safe
}

var qEventsJobs = mustQuery("events_jobs")

// JobEvents writes p's event for each of its jobs, as they are now in
// this transaction (driver.EventExecutor).
func (e *executor) JobEvents(ctx context.Context, p driver.JobEvents) error {
	if len(p.JobIDs) == 0 {
		return nil
	}
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qEventsJobs, namedArgs{
		"type": string(p.Type), "ids": p.JobIDs, "now": timeArg(p.Now),
	})
	if err != nil {
		return fmt.Errorf("write %d %s events: %w", len(p.JobIDs), p.Type, translate(err))
	}
	return nil
}

var qEventsSource = mustQuery("events_source")

// SourceEvent writes p's event of one source (driver.EventExecutor).
func (e *executor) SourceEvent(ctx context.Context, p driver.SourceEvent) error {
	ctx, cancel := e.d.op(ctx)
	defer cancel()
	_, err := e.q.Exec(ctx, qEventsSource, namedArgs{
		"type": string(p.Type), "workspace": p.Workspace, "subject": p.SourceID,
		"time": timeArg(p.Time), "data": string(p.Data),
	})
	if err != nil {
		return fmt.Errorf("write %s event of source %s: %w", p.Type, p.SourceID, translate(err))
	}
	return nil
}
