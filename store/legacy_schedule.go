package store

import "github.com/windforce/windforce/schedule"

// legacySchedule is the part of the schedule unit the driver still answers
// (transitional).
type legacySchedule interface {
	schedule.Store
}
