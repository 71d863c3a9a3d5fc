package storetest

import (
	"testing"

	"github.com/windforce/windforce/spine"
)

// testMigrate checks that Migrate applies only what is missing: running it
// again on a migrated store changes nothing and keeps the data.
func testMigrate(t *testing.T, newStore newStoreFunc) {
	t.Run("Idempotent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		id := b.enqueue()
		for range 2 {
			if err := b.store.Migrate(b.ctx); err != nil {
				t.Fatalf("Migrate on a migrated store: %v", err)
			}
		}
		b.requireStatus(id, spine.StatusQueued, "Migrate must keep existing jobs")
	})
}
