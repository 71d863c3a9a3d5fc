// Package drivertest is the conformance suite of the driver operations:
// each operation of driver.Executor, on every database, each case on a
// fresh database of its own. It checks what one statement does (the rows
// it writes, the typed error it answers), not the spine's invariants,
// which spine/storetest checks once over the core.
//
// A driver's tests call Run with an opener:
//
//	func TestDriver(t *testing.T) { drivertest.Run(t, openDriver) }
package drivertest

import (
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// Open returns a fresh, migrated driver, closed at the test's cleanup.
type Open func(t *testing.T) driver.Driver

// cases are the suite's tests by name; each unit's file registers its own.
var cases = map[string]func(t *testing.T, open Open){}

// register adds the tests of one unit; it runs at package init.
func register(name string, fn func(t *testing.T, open Open)) bool {
	if _, dup := cases[name]; dup {
		panic("drivertest: case registered twice: " + name)
	}
	cases[name] = fn
	return true
}

// Run runs every case, in parallel subtests named by unit.
func Run(t *testing.T, open Open) {
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cases[name](t, open)
		})
	}
}

// WaitWake waits for a wake-up on ch (a Subscribe or SubscribeCompletion
// channel) or fails the test after a deadline; what says which wake-up.
func WaitWake[T any](t testing.TB, ch <-chan T, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake-up %s", what)
	}
}

// getJob reads job id of workspace "ws" (every unit's cases use it) or
// fails the test.
func getJob(t *testing.T, ex driver.Executor, id uuid.UUID) spine.Job {
	t.Helper()
	j, err := ex.GetJob(t.Context(), "ws", id)
	if err != nil {
		t.Fatalf("GetJob %s: %v", id, err)
	}
	return j
}

// jobErr is an encoded job error of kind ("" for none), as the core
// passes it to the queue and reaper operations.
func jobErr(t *testing.T, msg, kind string) string {
	t.Helper()
	enc, err := spine.JobError{Message: msg, Kind: kind}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return enc
}
