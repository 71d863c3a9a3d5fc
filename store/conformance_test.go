package store

import (
	"testing"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/auth/authtest"
	"github.com/windforce/windforce/catalog/catalogtest"
	"github.com/windforce/windforce/schedule/scheduletest"
	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine/storetest"
)

// TestSpine runs the spine suite (every invariant of DESIGN §2) over the
// core on each driver, each subtest on a fresh database.
func TestSpine(t *testing.T) {
	eachDriver(t, func(t *testing.T, open func(t *testing.T) *Store) {
		storetest.Run(t, func(t *testing.T) storetest.Store {
			return withSecrets(t, open(t), []string{"ws-test", "ws-other"}, "api_token")
		})
	})
}

// TestCatalog runs the catalog suite over the core on each driver.
func TestCatalog(t *testing.T) {
	eachDriver(t, func(t *testing.T, open func(t *testing.T) *Store) {
		catalogtest.Run(t, func(t *testing.T) catalogtest.Store {
			return withSecrets(t, open(t), []string{"ws-cat", "ws-other"}, "slack_token", "region")
		})
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

// withSecrets sets the secrets a suite's pins reference in its workspaces:
// enqueue refuses a job whose env names a secret its workspace lacks
// (DESIGN §8), and the suites pin a full env, references included.
func withSecrets(t *testing.T, s *Store, workspaces []string, names ...string) *Store {
	t.Helper()
	key, err := secrets.DeriveKey([]byte("conformance"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range workspaces {
		for _, name := range names {
			if _, _, err := s.PutSecret(t.Context(), key, secrets.Put{Workspace: ws, Name: name, Value: []byte("v"), Actor: "test"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}
