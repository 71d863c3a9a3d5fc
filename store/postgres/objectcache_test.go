package postgres

import (
	"testing"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/objectcache/cachetest"
)

// TestObjectCacheConformance runs the object cache suite on the database
// cache, each subtest on a fresh, migrated schema.
func TestObjectCacheConformance(t *testing.T) {
	cachetest.Run(t, func(t *testing.T) cachetest.Cache {
		return newStore(t).ObjectCache().(*ObjectCache)
	})
}

// TestObjectCacheOpen: WINDFORCE_OBJECT_CACHE=postgres opens the database
// cache of a Postgres store.
func TestObjectCacheOpen(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	c, err := objectcache.Open("postgres", s)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	if _, ok := c.(*ObjectCache); !ok {
		t.Fatalf("postgres opened a %T", c)
	}
}
