package schedule

import (
	"errors"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// Unrunnable reports whether an enqueue error means the schedule's job can
// never be made as things stand: its app or action left the catalog, or
// its fixed input no longer matches the action's input schema, or its env
// names a secret the workspace does not have (any more). FireTick
// still advances the tick then (fired true, the error returned), so the
// schedule neither stalls nor retries the same tick forever; the next
// sync may make it runnable again.
func Unrunnable(err error) bool {
	return errors.Is(err, catalog.ErrNotFound) || errors.Is(err, catalog.ErrInvalidInput) ||
		errors.Is(err, catalog.ErrMissingSecret) || errors.Is(err, spine.ErrInvalid)
}

// ErrNotFound means the schedule (in that workspace) does not exist. It
// matches spine.ErrNotFound too, so the API answers 404 without knowing
// this package.
var ErrNotFound = spine.NotFound("schedule not found")
