package sqlite

import (
	"testing"

	"github.com/windforce/windforce/catalog/catalogtest"
)

// TestCatalogConformance runs the catalog suite on fresh SQLite files.
func TestCatalogConformance(t *testing.T) {
	catalogtest.Run(t, func(t *testing.T) catalogtest.Store { return newStore(t) })
}
