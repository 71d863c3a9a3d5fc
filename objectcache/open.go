package objectcache

import (
	"fmt"
	"strings"
)

// DefaultSpec is the object cache of `windforce dev`.
const DefaultSpec = "file://./.windforce/objects"

// Provider is a database store that can keep trees itself
// (store/postgres.Driver).
type Provider interface {
	ObjectCache() Cache
}

// Open returns the cache a WINDFORCE_OBJECT_CACHE value names:
// "file://DIR", or "postgres" for trees kept in the database db (which
// must then be a Provider, that is a Postgres store).
func Open(spec string, db any) (Cache, error) {
	switch {
	case strings.HasPrefix(spec, "file://"):
		dir := strings.TrimPrefix(spec, "file://")
		if dir == "" {
			return nil, fmt.Errorf("object cache %q: file:// needs a directory", spec)
		}
		return NewFileCache(dir)
	case spec == "postgres":
		p, ok := db.(Provider)
		if !ok {
			return nil, fmt.Errorf("object cache %q: the database is not Postgres; use file://DIR", spec)
		}
		return p.ObjectCache(), nil
	}
	return nil, fmt.Errorf("object cache %q: want file://DIR or postgres", spec)
}
