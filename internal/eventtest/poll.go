package eventtest

import (
	"testing"
	"time"
)

// Eventually polls cond every 50 ms until it holds, or fails t with what
// once within has passed: the way these tests wait for a delivery, with a
// deadline and no fixed sleep.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, what)
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}
