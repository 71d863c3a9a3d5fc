// Package objectcache stores the file tree of each synced commit, where
// workers (which never talk to git) fetch it.
//
// A tree is complete only when its marker, the file
// .windforce_clone_complete, is present, and the marker is always written
// LAST, after every file of the tree. Readers refuse a tree without its
// marker (*IncompleteError, matched by ErrIncomplete), so a sync that stops
// halfway (crash, full disk, lost connection) is invisible: the catalog is
// updated only after Put returned, and it never names such a commit.
//
//	Put(key, files)
//	  ├─ marker present? ──yes──▶ no-op (a commit is never rewritten)
//	  ├─ write every file        (file://: in a temp dir; postgres: chunk rows)
//	  ├─ BeforeMarker hook       (tests stop the write here)
//	  └─ write the marker LAST   (file://: then rename the dir into place;
//	                              postgres: the marker row, in its own transaction)
//
// Workers copy a complete tree to a local directory with Materialize, which
// follows the same rule (files first, marker last, rename into place).
//
// Backends: file://DIR (FileCache, here) and postgres (blobs in the
// database, store/postgres.ObjectCache), chosen by WINDFORCE_OBJECT_CACHE
// through Open. objectcache/cachetest is the suite both pass.
package objectcache
