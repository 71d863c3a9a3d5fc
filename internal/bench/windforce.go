package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// Tag is the tag bench jobs run on; OtherTag holds the jobs of the depth
// measurement that no bench worker serves.
const (
	Tag      = "bench"
	OtherTag = "bench-unserved"
)

// Windforce is the windforce spine as a System: a store on a fresh Postgres
// schema or SQLite file, and one spine.Worker.
type Windforce struct {
	// Failing makes every job's handler return an error (jobs have one
	// attempt, so each finishes as failure): the cost of a failure storm.
	Failing bool

	store  *store.Store
	db     string
	drop   func(ctx context.Context) error
	worker *spine.Worker
	// closers run at Close before the store closes (the relay of
	// AddEventSink).
	closers []func(ctx context.Context) error
}

var _ System = (*Windforce)(nil)

// errFailing is what a Failing bench's jobs fail with.
var errFailing = errors.New("bench job failed on purpose")

// NewWindforce opens a fresh, migrated store at url: a new schema on the
// Postgres server of a postgres:// URL, or a new file at the path of a
// sqlite://PATH URL (which must not exist yet). Close drops it again.
func NewWindforce(ctx context.Context, url string) (*Windforce, error) {
	w := &Windforce{}
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		schema := "wf_bench_" + randomHex(6)
		s, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, MaxConns: 12})
		if err != nil {
			return nil, fmt.Errorf("open bench schema: %w", err)
		}
		w.store, w.db = store.New(s), "postgres"
		w.drop = func(ctx context.Context) error { return DropSchema(ctx, url, schema) }
	case strings.HasPrefix(url, "sqlite://"):
		path := strings.TrimPrefix(url, "sqlite://")
		if _, err := os.Stat(path); err == nil {
			return nil, fmt.Errorf("sqlite bench file %s already exists: the bench makes a fresh one and deletes it", path)
		}
		s, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			return nil, fmt.Errorf("open bench file: %w", err)
		}
		w.store, w.db = store.New(s), "sqlite"
		w.drop = func(context.Context) error { return removeSQLite(path) }
	default:
		return nil, fmt.Errorf("bench database URL: want postgres://… or sqlite://PATH")
	}
	if err := w.store.Migrate(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("migrate bench database: %w", err), w.Close(ctx))
	}
	return w, nil
}

// Store is the spine store under test.
func (w *Windforce) Store() spine.Store { return w.store }

// Name is "windforce".
func (w *Windforce) Name() string { return "windforce" }

// Database is "postgres" or "sqlite".
func (w *Windforce) Database() string { return w.db }

// Insert enqueues n jobs with one EnqueueBatch.
func (w *Windforce) Insert(ctx context.Context, n int) error {
	return insertOn(ctx, w.store, Tag, n)
}

// InsertOne enqueues one job with Enqueue.
func (w *Windforce) InsertOne(ctx context.Context) error {
	_, err := w.store.Enqueue(ctx, jobParams(Tag))
	return err
}

// Start starts one worker with concurrency workers on the bench tag.
func (w *Windforce) Start(ctx context.Context, workers int, hook Hook) error {
	wk, err := spine.NewWorker(spine.WorkerConfig{
		Store: w.store, Tags: []string{Tag}, Concurrency: workers,
		Handler: func(context.Context, *spine.ClaimedJob) (json.RawMessage, error) {
			hook(time.Now())
			if w.Failing {
				return nil, errFailing
			}
			return nil, nil
		},
	})
	if err != nil {
		return err
	}
	w.worker = wk
	return wk.Start(context.WithoutCancel(ctx))
}

// Stop stops the worker; spine.Worker.Stop waits for every outcome to be
// written.
func (w *Windforce) Stop(context.Context) error {
	if w.worker != nil {
		w.worker.Stop()
		w.worker = nil
	}
	return nil
}

// Close closes the store and drops its schema or file.
func (w *Windforce) Close(ctx context.Context) error {
	_ = w.Stop(ctx)
	var errs []error
	for _, c := range w.closers {
		errs = append(errs, c(ctx))
	}
	w.store.Close()
	return errors.Join(append(errs, w.drop(ctx))...)
}

// jobParams is one no-op bench job on tag.
func jobParams(tag string) spine.EnqueueParams {
	return spine.EnqueueParams{
		Workspace: "bench", TriggerKind: spine.TriggerAPI, Input: json.RawMessage(`{}`),
		Pin: spine.Pin{AppKey: "bench", ActionKey: "noop", Tag: tag, Runtime: "go", Retry: spine.DefaultRetry},
	}
}

// insertOn enqueues n no-op jobs on tag with one EnqueueBatch.
func insertOn(ctx context.Context, s spine.Store, tag string, n int) error {
	ps := make([]spine.EnqueueParams, n)
	for i := range ps {
		ps[i] = jobParams(tag)
	}
	_, err := s.EnqueueBatch(ctx, ps)
	return err
}

// DropSchema drops a bench schema and everything in it.
func DropSchema(ctx context.Context, url, schema string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("drop bench schema %s: %w", schema, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("drop bench schema %s: %w", schema, err)
	}
	return nil
}

// removeSQLite deletes a bench database file with its WAL and shared
// memory files.
func removeSQLite(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// randomHex is n random bytes in hex, for fresh schema names.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
