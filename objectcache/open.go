package objectcache

import (
	"fmt"
	"strings"
)

// DefaultSpec is the object cache of `windforce dev`.
const DefaultSpec = "file://./.windforce/objects"

// Provider is a database store whose ObjectCache keeps trees in the
// database itself, or is nil when that database cannot (the store core:
// on Postgres it can, on SQLite it cannot).
type Provider interface {
	ObjectCache() Cache
}

// Open returns the cache a WINDFORCE_OBJECT_CACHE value names:
// "file://DIR", or "postgres" for trees kept in the database db (which
// must then be on Postgres).
func Open(spec string, db Provider) (Cache, error) {
	switch {
	case strings.HasPrefix(spec, "file://"):
		dir := strings.TrimPrefix(spec, "file://")
		if dir == "" {
			return nil, fmt.Errorf("object cache %q: file:// needs a directory", spec)
		}
		return NewFileCache(dir)
	case spec == "postgres":
		if c := db.ObjectCache(); c != nil {
			return c, nil
		}
		return nil, fmt.Errorf("object cache %q: the database is not Postgres; use file://DIR", spec)
	}
	return nil, fmt.Errorf("object cache %q: want file://DIR or postgres", spec)
}
