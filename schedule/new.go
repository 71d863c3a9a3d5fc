package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// PreviewRuns is how many upcoming ticks a preview shows.
const PreviewRuns = 5

// New completes s for CreateSchedule: it checks the cron expression and
// the zone (*SpecError), the names (spine.ErrInvalid), reads an empty
// input as {}, and sets a fresh ID, CreatedAt = now and NextRunAt = the
// first tick after now. It does not look at the catalog: the caller checks
// that the action exists and that the input matches its schema.
func New(s Schedule, now time.Time) (Schedule, error) {
	if s.Workspace == "" || s.App == "" || s.Action == "" {
		return Schedule{}, fmt.Errorf("new schedule: %w: workspace, app and action are required", spine.ErrInvalid)
	}
	c, err := ParseCron(s.Cron, s.Timezone)
	if err != nil {
		return Schedule{}, fmt.Errorf("new schedule: %w", err)
	}
	if len(bytes.TrimSpace(s.Input)) == 0 {
		s.Input = json.RawMessage(`{}`)
	}
	if !utf8.Valid(s.Input) || !json.Valid(s.Input) {
		return Schedule{}, fmt.Errorf("new schedule: %w: input is not valid JSON in UTF-8", spine.ErrInvalid)
	}
	if err := spine.CheckText("input", s.Input); err != nil {
		// Every tick would be refused by the enqueue (and Postgres refuses
		// the row): say so now, on both databases.
		return Schedule{}, fmt.Errorf("new schedule: %w", err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Schedule{}, fmt.Errorf("new schedule: id: %w", err)
	}
	s.ID = id
	s.CreatedAt = now.UTC().Truncate(time.Microsecond)
	s.NextRunAt = c.Next(now)
	s.LastRunAt, s.LastJobID = nil, nil
	return s, nil
}

// NextTick is the tick to move s to once its due tick fires: the first
// tick strictly after the later of the due tick and now. Ticks missed
// while no server ran are thus skipped, so an outage fires a schedule once
// rather than once per missed tick.
func NextTick(c *Cron, due, now time.Time) time.Time {
	return c.Next(later(due, now))
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Upcoming is the next n ticks of sc as the scheduler will fire them: the
// due tick, then the ticks after the later of it and now (a tick overdue
// fires once). None while sc is disabled, or when its expression no longer
// parses.
func Upcoming(sc Schedule, now time.Time, n int) []time.Time {
	out := []time.Time{}
	c, err := ParseCron(sc.Cron, sc.Timezone)
	if err != nil || !sc.Enabled || n <= 0 {
		return out
	}
	out = append(out, sc.NextRunAt)
	return append(out, c.NextN(later(sc.NextRunAt, now), n-1)...)
}
