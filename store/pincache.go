package store

import (
	"sync"
	"time"

	"github.com/windforce/windforce/catalog"
)

// Pin cache bounds. An entry is only a shortcut (the insert checks it,
// spine.EnqueueParams.AtCommit), so the age bound is not needed for
// correctness: it caps how long a process keeps rows another one rewrote
// without moving the app's commit (a sync of the same commit again).
const (
	pinCacheSize = 4096
	pinCacheAge  = 5 * time.Second
)

// pinCache keeps the catalog rows an enqueue outside a transaction
// resolved, by workspace, app and action, so that the next enqueue of the
// action needs no read of the catalog: it is inserted only while the app
// is still at the cached source and commit (AtCommit), and an entry found
// stale, or whose schema refused an input, is dropped and read again. On
// Postgres that is one round trip of the two a ?wait enqueue made.
type pinCache struct {
	mu sync.Mutex
	m  map[pinKey]pinEntry
}

type pinKey struct{ workspace, app, action string }

type pinEntry struct {
	app    catalog.App
	action catalog.Action
	read   time.Time
}

func keyOf(r catalog.EnqueueRequest) pinKey { return pinKey{r.Workspace, r.App, r.Action} }

// get returns the rows cached for r's action, if young enough.
func (c *pinCache) get(r catalog.EnqueueRequest) (catalog.App, catalog.Action, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[keyOf(r)]
	if !ok || time.Since(e.read) > pinCacheAge {
		return catalog.App{}, catalog.Action{}, false
	}
	return e.app, e.action, true
}

// put remembers the rows read for r's action at read.
func (c *pinCache) put(r catalog.EnqueueRequest, app catalog.App, action catalog.Action, read time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= pinCacheSize {
		c.m = map[pinKey]pinEntry{} // crude but bounded
	}
	c.m[keyOf(r)] = pinEntry{app: app, action: action, read: read}
}

// drop forgets r's action.
func (c *pinCache) drop(r catalog.EnqueueRequest) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, keyOf(r))
}
