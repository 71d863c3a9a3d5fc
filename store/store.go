package store

import (
	"context"

	"github.com/google/uuid"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// Store is the store core: the queue spine, the catalog, schedules, tokens
// and webhooks over one driver, each rule written once here. It is safe
// for concurrent use.
type Store struct {
	drv driver.Driver
	// ex runs operations on the driver's pool.
	ex driver.Executor
	// pins spares an enqueue outside a transaction its catalog read.
	pins pinCache
}

// New builds the core over drv. The Store owns drv: Close closes it.
func New(drv driver.Driver) *Store {
	return &Store{drv: drv, ex: drv.Executor()}
}

// Driver returns the database under the core, for what is specific to one
// database (the Postgres object cache, a library caller's transaction).
func (s *Store) Driver() driver.Driver { return s.drv }

// Migrate applies the embedded, numbered migrations that are not yet
// applied. It refuses a migration set with gaps.
func (s *Store) Migrate(ctx context.Context) error { return s.drv.Migrate(ctx) }

// SchemaVersion reports the applied and the latest migration, for
// readiness checks and `windforce migrate`.
func (s *Store) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	return s.drv.SchemaVersion(ctx)
}

// Subscribe is spine.Store.Subscribe.
func (s *Store) Subscribe(tags []string) (<-chan struct{}, func()) { return s.drv.Subscribe(tags) }

// SubscribeCompletion is spine.Store.SubscribeCompletion.
func (s *Store) SubscribeCompletion(id uuid.UUID) (<-chan spine.Finished, func()) {
	return s.drv.SubscribeCompletion(id)
}

// SubscribeDispatch is spine.Store.SubscribeDispatch.
func (s *Store) SubscribeDispatch(worker string) (*spine.Inbox, func()) {
	return s.drv.SubscribeDispatch(worker)
}

// Close releases the driver's connections and stops its listener.
func (s *Store) Close() { s.drv.Close() }

// ObjectCache is the object cache kept in the database itself, or nil when
// the driver keeps none (SQLite: its trees go to a file:// cache). This is
// the one capability only one database has, asked explicitly.
func (s *Store) ObjectCache() objectcache.Cache {
	if p, ok := s.drv.(objectcache.Provider); ok {
		return p.ObjectCache()
	}
	return nil
}
