package postgres

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind (a
// listener not stopped by Close, a pool not closed).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
