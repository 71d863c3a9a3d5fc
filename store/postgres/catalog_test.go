package postgres

import (
	"testing"

	"github.com/windforce/windforce/catalog/catalogtest"
)

// TestCatalogConformance runs the catalog suite, each subtest on a fresh,
// migrated schema.
func TestCatalogConformance(t *testing.T) {
	catalogtest.Run(t, func(t *testing.T) catalogtest.Store { return newStore(t) })
}
