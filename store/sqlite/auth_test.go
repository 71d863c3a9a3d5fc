package sqlite

import (
	"testing"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/auth/authtest"
)

// TestAuthConformance runs the token and session suite on fresh SQLite files.
func TestAuthConformance(t *testing.T) {
	t.Parallel()
	authtest.Run(t, func(t *testing.T) auth.Store { return newStore(t) })
}
