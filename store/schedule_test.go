package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// TestScheduleNotFound checks that a missing schedule answers the same
// text on both databases (docs/API.md shows the delete's), matching
// schedule.ErrNotFound and spine.ErrNotFound, and the same for a schedule
// of another workspace.
func TestScheduleNotFound(t *testing.T) {
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		tick := time.Date(2031, 3, 4, 5, 6, 0, 0, time.UTC)
		sc := schedule.Schedule{
			ID: uuid.New(), Workspace: "ws", App: "hello", Action: "greet", Cron: "* * * * *",
			Input: json.RawMessage(`{}`), Enabled: true, NextRunAt: tick, CreatedAt: tick,
		}
		if err := s.CreateSchedule(ctx, sc); err != nil {
			t.Fatalf("create: %v", err)
		}
		for _, id := range []uuid.UUID{uuid.New(), sc.ID} {
			ws := "ws"
			if id == sc.ID {
				ws = "other"
			}
			missing := fmt.Sprintf("schedule not found: %s in workspace %q", id, ws)
			_, getErr := s.GetSchedule(ctx, ws, id)
			for _, c := range []struct {
				op   string
				err  error
				want string
			}{
				{"get", getErr, missing},
				{"enable", s.SetScheduleEnabled(ctx, ws, id, true, tick), fmt.Sprintf("set schedule %s enabled=true: %s", id, missing)},
				{"delete", s.DeleteSchedule(ctx, ws, id), fmt.Sprintf("delete schedule %s: %s", id, missing)},
			} {
				if c.err == nil || c.err.Error() != c.want {
					t.Errorf("%s %s in %s = %v, want %q", c.op, id, ws, c.err, c.want)
				}
				if !errors.Is(c.err, schedule.ErrNotFound) || !errors.Is(c.err, spine.ErrNotFound) {
					t.Errorf("%s %s in %s = %v, want it to match schedule.ErrNotFound and spine.ErrNotFound", c.op, id, ws, c.err)
				}
			}
		}
		if _, err := s.GetSchedule(ctx, "ws", sc.ID); err != nil {
			t.Fatalf("the schedule itself: %v", err)
		}
	})
}
