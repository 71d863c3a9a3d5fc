package sqlite

import (
	"testing"

	"github.com/windforce/windforce/store/driver"
	"github.com/windforce/windforce/store/driver/drivertest"
)

// TestDriver runs the driver suite, each case on a fresh migrated file.
func TestDriver(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Driver { return newStore(t) })
}
