package schedule

import (
	"errors"
	"fmt"
	"strings"
	"time"

	// The zone database ships in the binary, so every server (and a
	// container without /usr/share/zoneinfo) computes the same ticks.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"

	"github.com/windforce/windforce/spine"
)

// parser reads 5 fields (minute precision), 6 with leading seconds, and the
// descriptors (@hourly, @daily, @every 10m …).
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour |
	cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// errNeverFires refuses an expression without a tick in the next five
// years (30 February).
var errNeverFires = errors.New("the expression never fires")

// Fields of a schedule that a SpecError can name.
const (
	FieldCron     = "cron"
	FieldTimezone = "timezone"
)

// SpecError is a cron expression or time zone that cannot be used. It
// matches spine.ErrInvalid, so callers that only know the spine's errors
// still answer 400; Field says which input was wrong.
type SpecError struct {
	Field string // FieldCron or FieldTimezone
	Value string
	Err   error
}

// Error reads `cron "x": expected 5 to 6 fields`.
func (e *SpecError) Error() string {
	return fmt.Sprintf("%s %q: %v", e.Field, e.Value, e.Err)
}

// Unwrap returns the parser's reason.
func (e *SpecError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, spine.ErrInvalid) true.
func (e *SpecError) Is(target error) bool { return target == spine.ErrInvalid }

// Cron is a parsed cron expression bound to its time zone.
type Cron struct {
	sched cron.Schedule
	loc   *time.Location
	// wall is set for field-based specs: they are evaluated on loc's wall
	// clock, not on its instants (see Next).
	wall bool
}

// ParseCron parses spec in the IANA zone timezone ("" is UTC). A spec that
// never fires (30 February) is refused too, so a stored schedule always
// has a next tick. The zone belongs in timezone, not in a CRON_TZ= prefix,
// so there is one way to say it.
func ParseCron(spec, timezone string) (*Cron, error) {
	loc, err := loadZone(timezone)
	if err != nil {
		return nil, err
	}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, &SpecError{Field: FieldCron, Value: spec, Err: fmt.Errorf("empty expression")}
	}
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		return nil, &SpecError{Field: FieldCron, Value: spec, Err: fmt.Errorf("put the time zone in the timezone field, not in the expression")}
	}
	s, err := parser.Parse(spec)
	if err != nil {
		return nil, &SpecError{Field: FieldCron, Value: spec, Err: err}
	}
	// The parser defaults to the process's local zone. A field-based spec
	// is evaluated on the zone's wall clock instead (see Next), so it runs
	// in UTC over wall times; @every keeps real durations.
	c := &Cron{sched: s, loc: loc}
	if ss, ok := s.(*cron.SpecSchedule); ok {
		ss.Location = time.UTC
		c.wall = true
	}
	if c.Next(time.Now()).IsZero() {
		return nil, &SpecError{Field: FieldCron, Value: spec, Err: errNeverFires}
	}
	return c, nil
}

// loadZone resolves an IANA zone name; "" is UTC.
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	// LoadLocation accepts "Local", which would make ticks depend on the
	// server's configuration.
	if name == "Local" {
		return nil, &SpecError{Field: FieldTimezone, Value: name, Err: fmt.Errorf("name an IANA zone such as Europe/Berlin")}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, &SpecError{Field: FieldTimezone, Value: name, Err: fmt.Errorf("unknown IANA time zone: %w", err)}
	}
	return loc, nil
}

// Next is the first tick strictly after after, in UTC; zero when there is
// none within five years.
//
// Field-based specs follow the zone's wall clock across daylight-saving
// changes, as cron users expect: a wall time that does not exist (spring
// forward; 02:30 in Europe/Berlin on the last Sunday of March) fires once,
// at the first instant after the gap (03:00), rather than being skipped
// for the day; a
// wall time that happens twice (fall back) fires once, at its first
// occurrence, rather than twice. (robfig/cron alone does the opposite of
// both.)
func (c *Cron) Next(after time.Time) time.Time {
	if !c.wall {
		return utcOrZero(c.sched.Next(after.In(c.loc)))
	}
	w := wallClock(after.In(c.loc))
	// A wall time may map to an instant at or before after (the second
	// pass of a repeated hour): step on through wall times until one
	// lies ahead. An hour of seconds bounds the steps.
	for range 3700 {
		if w = c.sched.Next(w); w.IsZero() {
			return w
		}
		t := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, c.loc)
		if !wallClock(t).Equal(w) {
			t = afterGap(t, w)
		}
		if t.After(after) {
			return t.UTC()
		}
	}
	return time.Time{}
}

// wallClock is t's wall-clock reading as a UTC time: the clock on the wall
// with its zone taken away.
func wallClock(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}

// afterGap is the first instant after the daylight-saving gap that wall
// time w fell into; t is what time.Date made of w, on whichever side of
// the gap it chose.
func afterGap(t, w time.Time) time.Time {
	start, end := t.ZoneBounds()
	if wallClock(t).Before(w) {
		return end
	}
	return start
}

func utcOrZero(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// NextN is the next n ticks after after (fewer when the expression stops
// firing), for previews.
func (c *Cron) NextN(after time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for range n {
		after = c.Next(after)
		if after.IsZero() {
			break
		}
		out = append(out, after)
	}
	return out
}
