package postgres

import (
	"context"
	"fmt"
	"io/fs"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/objectcache"
)

// chunkSize is the largest piece of a file stored in one object_chunk row.
const chunkSize = 256 << 10

// Object cache queries (queries/objectcache_*.sql).
var (
	qObjLock    = mustQuery("objectcache_lock")
	qObjHas     = mustQuery("objectcache_has")
	qObjPartial = mustQuery("objectcache_partial")
	qObjClear   = mustQuery("objectcache_clear")
	qObjMarker  = mustQuery("objectcache_marker")
	qObjFiles   = mustQuery("objectcache_files")
	qObjChunks  = mustQuery("objectcache_chunks")
)

// ObjectCache keeps commit trees in the database (WINDFORCE_OBJECT_CACHE=
// postgres), so a deployment on many machines needs nothing but Postgres.
// Files are split in chunks of 256 KiB. A tree is written in one
// transaction and its marker row in a later one: a tree without marker
// (a writer that stopped between the two) is refused by readers.
type ObjectCache struct {
	s *Driver

	mu           sync.Mutex
	beforeMarker objectcache.BeforeMarkerFunc
}

var _ objectcache.Cache = (*ObjectCache)(nil)

// ObjectCache returns the object cache kept in this database.
func (s *Driver) ObjectCache() objectcache.Cache { return &ObjectCache{s: s} }

// SetBeforeMarker sets the test hook run between the tree and the marker.
func (c *ObjectCache) SetBeforeMarker(fn objectcache.BeforeMarkerFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.beforeMarker = fn
}

func keyArgs(k objectcache.Key) namedArgs {
	return namedArgs{"workspace": k.Workspace, "source_id": k.Source, "commit_sha": k.Commit}
}

// Has reports whether the tree's marker row exists.
func (c *ObjectCache) Has(ctx context.Context, key objectcache.Key) (bool, error) {
	if err := key.Validate(); err != nil {
		return false, err
	}
	ctx, cancel := c.s.op(ctx)
	defer cancel()
	var ok bool
	if err := c.s.pool.QueryRow(ctx, qObjHas, keyArgs(key)).Scan(&ok); err != nil {
		return false, fmt.Errorf("object cache: check %s: %w", key, err)
	}
	return ok, nil
}

// Put writes the tree (replacing a leftover without marker) in one
// transaction, then the marker in another. A complete tree is left alone.
func (c *ObjectCache) Put(ctx context.Context, key objectcache.Key, files []objectcache.File) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if err := objectcache.CheckFiles(files); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if ok, err := c.Has(ctx, key); err != nil || ok {
		return err
	}
	done := false
	err := c.s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		done, err = writeTree(ctx, tx, key, files)
		return err
	})
	if err != nil {
		return fmt.Errorf("object cache: put %s: %w", key, err)
	}
	if done {
		return nil
	}
	c.mu.Lock()
	hook := c.beforeMarker
	c.mu.Unlock()
	if hook != nil {
		if err := hook(ctx, key); err != nil {
			return fmt.Errorf("object cache: put %s: before marker: %w", key, err)
		}
	}
	err = c.s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qObjLock, keyArgs(key)); err != nil {
			return err
		}
		args := keyArgs(key)
		args["files"] = len(files)
		_, err := tx.Exec(ctx, qObjMarker, args)
		return err
	})
	if err != nil {
		return fmt.Errorf("object cache: put %s: write marker: %w", key, err)
	}
	return nil
}

// writeTree writes every file under the commit's lock. done is true when
// another writer completed the tree meanwhile (nothing written).
func writeTree(ctx context.Context, tx pgx.Tx, key objectcache.Key, files []objectcache.File) (done bool, err error) {
	args := keyArgs(key)
	if _, err := tx.Exec(ctx, qObjLock, args); err != nil {
		return false, fmt.Errorf("lock: %w", err)
	}
	if err := tx.QueryRow(ctx, qObjHas, args).Scan(&done); err != nil || done {
		return done, err
	}
	if _, err := tx.Exec(ctx, qObjClear, args); err != nil {
		return false, fmt.Errorf("clear leftover: %w", err)
	}
	var fileRows, chunkRows [][]any
	for _, f := range files {
		fileRows = append(fileRows, []any{key.Workspace, key.Source, key.Commit, f.Path, int64(f.Mode), int64(len(f.Data))})
		for seq, off := 0, 0; off < len(f.Data) || (seq == 0 && len(f.Data) == 0); seq, off = seq+1, off+chunkSize {
			end := min(off+chunkSize, len(f.Data))
			chunkRows = append(chunkRows, []any{key.Workspace, key.Source, key.Commit, f.Path, seq, f.Data[off:end]})
		}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"object_file"},
		[]string{"workspace", "source_id", "commit_sha", "path", "mode", "size"}, pgx.CopyFromRows(fileRows)); err != nil {
		return false, fmt.Errorf("write files: %w", err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"object_chunk"},
		[]string{"workspace", "source_id", "commit_sha", "path", "seq", "data"}, pgx.CopyFromRows(chunkRows)); err != nil {
		return false, fmt.Errorf("write chunks: %w", err)
	}
	return false, nil
}

// Get reads a complete tree in one snapshot.
func (c *ObjectCache) Get(ctx context.Context, key objectcache.Key) ([]objectcache.File, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	tx, err := c.s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("object cache: get %s: %w", key, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	files, err := readTree(ctx, tx, key)
	if err != nil {
		return nil, fmt.Errorf("object cache: get %s: %w", key, err)
	}
	return files, nil
}

func readTree(ctx context.Context, tx pgx.Tx, key objectcache.Key) ([]objectcache.File, error) {
	args := keyArgs(key)
	var complete, partial bool
	if err := tx.QueryRow(ctx, qObjHas, args).Scan(&complete); err != nil {
		return nil, err
	}
	if !complete {
		if err := tx.QueryRow(ctx, qObjPartial, args).Scan(&partial); err != nil {
			return nil, err
		}
		return nil, &objectcache.IncompleteError{Key: key, Partial: partial}
	}
	rows, err := tx.Query(ctx, qObjFiles, args)
	if err != nil {
		return nil, err
	}
	files, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (objectcache.File, error) {
		var f objectcache.File
		var mode, size int64
		err := r.Scan(&f.Path, &mode, &size)
		f.Mode, f.Data = fs.FileMode(mode), make([]byte, 0, size)
		return f, err
	})
	if err != nil {
		return nil, err
	}
	index := make(map[string]int, len(files))
	for i, f := range files {
		index[f.Path] = i
	}
	rows, err = tx.Query(ctx, qObjChunks, args)
	if err != nil {
		return nil, err
	}
	var path string
	var data []byte
	_, err = pgx.ForEachRow(rows, []any{&path, &data}, func() error {
		if i, ok := index[path]; ok {
			files[i].Data = append(files[i].Data, data...)
		}
		return nil
	})
	return files, err
}
