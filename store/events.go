package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// MaxEventsLimit bounds one EventsAfter read.
const MaxEventsLimit = 10000

// EventsAfter returns up to limit events of workspace ("" for every
// workspace) with seq > after, in seq order (DESIGN §9). It answers only
// events that are final: going on from the last seq it returned, a reader
// never misses an event committed later (on Postgres an event shows once
// every transaction that was open when it committed has ended). limit is
// between 1 and MaxEventsLimit.
func (s *Store) EventsAfter(ctx context.Context, workspace string, after int64, limit int) ([]events.Event, error) {
	if limit <= 0 || limit > MaxEventsLimit {
		return nil, fmt.Errorf("read events: %w: limit %d is not between 1 and %d", spine.ErrInvalid, limit, MaxEventsLimit)
	}
	evs, err := s.ex.EventsAfter(ctx, workspace, max(after, 0), limit)
	if err != nil {
		return nil, fmt.Errorf("read events after %d: %w", after, err)
	}
	return evs, nil
}

// jobEvents writes an event of typ at now (zero: the database's clock)
// for each of ids, in the transaction of ex, as the change just written
// left each job. The tuned operations (enqueue, claim, completion) write
// their own (driver.EventExecutor); every other transition calls this
// right after its change. No id, no statement.
func jobEvents(ctx context.Context, ex driver.Executor, typ events.Type, now time.Time, ids ...uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	if err := ex.JobEvents(ctx, driver.JobEvents{Type: typ, JobIDs: ids, Now: now}); err != nil {
		return fmt.Errorf("write %s events: %w", typ, err)
	}
	return nil
}
