package store

import (
	"testing"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/auth/authtest"
	"github.com/windforce/windforce/catalog/catalogtest"
	"github.com/windforce/windforce/schedule/scheduletest"
	"github.com/windforce/windforce/spine/storetest"
)

// TestSpine runs the spine suite (every invariant of DESIGN §2) over the
// core on each driver, each subtest on a fresh database.
func TestSpine(t *testing.T) {
	eachDriver(t, func(t *testing.T, open func(t *testing.T) *Store) {
		storetest.Run(t, func(t *testing.T) storetest.Store { return open(t) })
	})
}

// TestCatalog runs the catalog suite over the core on each driver.
func TestCatalog(t *testing.T) {
	eachDriver(t, func(t *testing.T, open func(t *testing.T) *Store) {
		catalogtest.Run(t, func(t *testing.T) catalogtest.Store { return open(t) })
	})
}

// TestSchedules runs the schedule suite over the core on each driver.
func TestSchedules(t *testing.T) {
	eachDriver(t, func(t *testing.T, open func(t *testing.T) *Store) {
		scheduletest.Run(t, func(t *testing.T) scheduletest.Store { return open(t) })
	})
}

// TestTokens runs the token and session suite over the core on each driver.
func TestTokens(t *testing.T) {
	eachDriver(t, func(t *testing.T, open func(t *testing.T) *Store) {
		authtest.Run(t, func(t *testing.T) auth.Store { return open(t) })
	})
}
