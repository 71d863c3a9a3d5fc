package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"

	// The pure-Go SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"
)

// readerConns is the size of the reader pool: enough for the API's reads to
// run beside each other, few enough to keep file handles and memory small.
const readerConns = 4

// busyTimeoutMS is how long a connection waits for a lock another process
// holds before failing with SQLITE_BUSY.
const busyTimeoutMS = 10000

// Options configures Open.
type Options struct {
	// Logger receives the store's informational messages (migrations
	// applied). Nil means slog.Default().
	Logger *slog.Logger
}

// Driver is the SQLite driver under the store core, on one file. It is safe for concurrent
// use; see the package documentation for its connection model.
type Driver struct {
	writer  *sql.DB
	reader  *sql.DB
	log     *slog.Logger
	wakeups spine.Wakeups
	// completions wakes the waiters of jobs this process finished; one
	// process owns a SQLite file, so no other writer can finish a job.
	completions spine.Completions

	// stmts holds the prepared statements once the schema is current (nil
	// before: queries are then prepared per transaction).
	stmts  atomic.Pointer[prepared]
	prepMu sync.Mutex

	// sourceLocks holds one lock per source (workspace NUL id → a channel
	// of one slot, so waiting respects ctx). One process owns a SQLite
	// file, so this serializes every sync of a source.
	sourceLocks sync.Map

	closeOnce sync.Once
	// group queues the write transactions waiting for the writer
	// (group.go).
	group committer
	// onCommit, set by tests before the driver is used, is called after
	// each commit of write and writeUnsynced with whether it was synced.
	onCommit func(synced bool)
	// wal is the database's write-ahead log, which Sync flushes.
	wal string
	// pragmas switch the writer between synced and unsynced commits.
	pragmas syncPragmas
}

// Open opens (creating it and its directory when missing) the SQLite
// database at path. It does not migrate: call Migrate.
func Open(ctx context.Context, path string, opts Options) (*Driver, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("open sqlite store: %w: a file path is required (the writer and the readers share the file)", spine.ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("open sqlite store: create directory: %w", err)
	}
	s := &Driver{log: opts.Logger, wal: abs + "-wal"}
	if s.log == nil {
		s.log = slog.Default()
	}
	if err := s.openPools(ctx, abs); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", abs, err)
	}
	if err := s.prepareIfCurrent(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open sqlite store %s: %w", abs, err)
	}
	return s, nil
}

// openPools opens the writer first, so the file exists in WAL mode before
// the query_only readers connect. Writer pragmas: every transaction is
// BEGIN IMMEDIATE (it takes the write lock up front and so never fails
// with SQLITE_BUSY halfway); WAL lets readers run beside the writer;
// synchronous=FULL makes every acknowledged commit durable; foreign keys
// are off because the spine has none by design (job_completed outlives
// job_queue).
func (s *Driver) openPools(ctx context.Context, abs string) error {
	writer, err := sql.Open("sqlite", dsn(abs, url.Values{
		"_txlock":       {"immediate"},
		"_busy_timeout": {fmt.Sprint(busyTimeoutMS)},
		"_journal_mode": {"WAL"},
		"_synchronous":  {"FULL"},
		"_foreign_keys": {"0"},
		"_pragma":       {fmt.Sprintf("cache_size(-%d)", writerCacheKiB)},
	}))
	if err != nil {
		return fmt.Errorf("open writer: %w", err)
	}
	s.writer = writer
	// One connection, never recycled: it is the single writer, and it
	// holds the prepared statements.
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := writer.PingContext(ctx); err != nil {
		return fmt.Errorf("connect writer: %w", err)
	}

	reader, err := sql.Open("sqlite", dsn(abs, url.Values{
		"_busy_timeout": {fmt.Sprint(busyTimeoutMS)},
		"_query_only":   {"1"},
	}))
	if err != nil {
		return fmt.Errorf("open readers: %w", err)
	}
	s.reader = reader
	reader.SetMaxOpenConns(readerConns)
	reader.SetMaxIdleConns(readerConns)
	reader.SetConnMaxIdleTime(5 * time.Minute)
	if err := reader.PingContext(ctx); err != nil {
		return fmt.Errorf("connect reader: %w", err)
	}
	return nil
}

// writerCacheKiB is the writer's page cache. SQLite's default (2 MiB) was
// measured short for a million-deep queue's claim index; but every commit
// also walks the cache's hash table (pcache1Truncate), so a large cache
// costs each transaction: 64 MiB took 10 % of the continuous bench's CPU.
// 8 MiB keeps claims at 1M waiting as fast as at 1k (docs/BENCHMARKS.md)
// without that cost.
const writerCacheKiB = 8 * 1024

// dsn builds a file: URI so any character in the path survives (the driver
// would split a plain name at its first '?').
func dsn(abs string, params url.Values) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: params.Encode()}
	return u.String()
}

// DB returns the writer connection pool (one connection), for tests and
// tools that need raw access. Do not hold it inside WithTx.
func (s *Driver) DB() *sql.DB { return s.writer }

// Subscribe returns a channel that receives a value after a commit made
// work claimable on one of tags (all tags when empty).
func (s *Driver) Subscribe(tags []string) (<-chan struct{}, func()) {
	return s.wakeups.Subscribe(tags)
}

// SubscribeCompletion returns a channel that receives a value after a
// commit wrote job id's job_completed row (see spine.Store).
func (s *Driver) SubscribeCompletion(id uuid.UUID) (<-chan spine.Finished, func()) {
	return s.completions.Subscribe(id)
}

// Close closes the prepared statements and both pools. It is idempotent.
func (s *Driver) Close() {
	s.closeOnce.Do(func() {
		var errs []error
		if p := s.stmts.Swap(nil); p != nil {
			errs = append(errs, p.close())
		}
		if s.reader != nil {
			errs = append(errs, s.reader.Close())
		}
		if s.writer != nil {
			s.closePragmas()
			errs = append(errs, s.writer.Close())
		}
		if err := errors.Join(errs...); err != nil {
			s.log.Warn("close sqlite store", "error", err)
		}
	})
}
