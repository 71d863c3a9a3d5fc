package sqlite

import (
	"testing"

	"github.com/windforce/windforce/schedule/scheduletest"
)

// TestScheduleConformance runs the schedule suite on fresh SQLite files.
func TestScheduleConformance(t *testing.T) {
	scheduletest.Run(t, func(t *testing.T) scheduletest.Store { return newStore(t) })
}
