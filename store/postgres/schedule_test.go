package postgres

import (
	"testing"

	"github.com/windforce/windforce/schedule/scheduletest"
)

// TestScheduleConformance runs the schedule suite, each subtest on a
// fresh, migrated schema.
func TestScheduleConformance(t *testing.T) {
	scheduletest.Run(t, func(t *testing.T) scheduletest.Store { return newStore(t) })
}
