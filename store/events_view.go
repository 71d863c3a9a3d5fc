package store

import (
	"context"
	"fmt"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
)

// MaxRecentEvents bounds one RecentEvents read.
const MaxRecentEvents = 1000

// RecentEvents returns the newest limit events of workspace, newest first:
// what happened lately, for people (the console) and for the live
// endpoint's ?after=now. It reads committed rows; on Postgres an event of
// a transaction still open may later appear below the newest seq read
// here, so a reader that goes on from a seq uses EventsAfter. limit is
// between 1 and MaxRecentEvents.
func (s *Store) RecentEvents(ctx context.Context, workspace string, limit int) ([]events.Event, error) {
	if limit <= 0 || limit > MaxRecentEvents {
		return nil, fmt.Errorf("read recent events: %w: limit %d is not between 1 and %d", spine.ErrInvalid, limit, MaxRecentEvents)
	}
	evs, err := s.ex.EventsRecent(ctx, workspace, limit)
	if err != nil {
		return nil, fmt.Errorf("read recent events of workspace %s: %w", workspace, err)
	}
	return evs, nil
}
