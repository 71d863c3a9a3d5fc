package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/windforce/windforce/internal/bench"

	// The pure-Go SQLite driver windforce uses too, registered as "sqlite".
	_ "modernc.org/sqlite"
)

// noopArgs is River's no-op bench job.
type noopArgs struct{}

// Kind names the job kind.
func (noopArgs) Kind() string { return "bench_noop" }

// noopWorker does nothing but tell the harness it started the job.
type noopWorker struct {
	river.WorkerDefaults[noopArgs]
	hook func() bench.Hook
}

// Work calls the harness hook.
func (w *noopWorker) Work(context.Context, *river.Job[noopArgs]) error {
	w.hook()(time.Now())
	return nil
}

// riverSystem is River as a bench.System, on either driver.
type riverSystem[TTx any] struct {
	db      string
	schema  string
	driver  riverdriver.Driver[TTx]
	inserts *river.Client[TTx] // insert-only client
	workers *river.Workers
	hook    bench.Hook
	client  *river.Client[TTx] // the working client while started
	close   func(ctx context.Context) error
}

var _ bench.System = (*riverSystem[pgx.Tx])(nil)

// newRiver opens a fresh River database at url (a new schema, or a new
// SQLite file) and migrates it.
func newRiver(ctx context.Context, url string) (bench.System, error) {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return newRiverPostgres(ctx, url)
	case strings.HasPrefix(url, "sqlite://"):
		return newRiverSQLite(ctx, strings.TrimPrefix(url, "sqlite://"))
	}
	return nil, errors.New("database URL: want postgres://… or sqlite://PATH")
}

func newRiverPostgres(ctx context.Context, url string) (bench.System, error) {
	schema := "river_bench_" + fmt.Sprint(time.Now().UnixNano()%1e9)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("river: parse url: %w", err)
	}
	cfg.MaxConns = 12
	cfg.ConnConfig.RuntimeParams["search_path"] = schema
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("river: connect: %w", err)
	}
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("river: create schema: %w", err)
	}
	s := &riverSystem[pgx.Tx]{db: "postgres", schema: schema, driver: riverpgxv5.New(pool)}
	s.close = func(ctx context.Context) error {
		pool.Close()
		return bench.DropSchema(ctx, url, schema)
	}
	return s, s.init(ctx)
}

func newRiverSQLite(ctx context.Context, path string) (bench.System, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("sqlite bench file %s already exists: the bench makes a fresh one and deletes it", path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)")
	if err != nil {
		return nil, fmt.Errorf("river: open sqlite: %w", err)
	}
	// As riversqlite's documentation advises, to avoid SQLITE_BUSY.
	db.SetMaxOpenConns(1)
	s := &riverSystem[*sql.Tx]{db: "sqlite", driver: riversqlite.New(db)}
	s.close = func(context.Context) error {
		return errors.Join(db.Close(), os.Remove(path), removeIfThere(path+"-wal"), removeIfThere(path+"-shm"))
	}
	return s, s.init(ctx)
}

func removeIfThere(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// init migrates River's tables and makes the insert-only client.
func (s *riverSystem[TTx]) init(ctx context.Context) error {
	m, err := rivermigrate.New(s.driver, &rivermigrate.Config{Schema: s.schema, Logger: quietLog()})
	if err != nil {
		return errors.Join(fmt.Errorf("river: migrator: %w", err), s.close(ctx))
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return errors.Join(fmt.Errorf("river: migrate: %w", err), s.close(ctx))
	}
	s.workers = river.NewWorkers()
	river.AddWorker(s.workers, &noopWorker{hook: func() bench.Hook { return s.hook }})
	s.inserts, err = river.NewClient(s.driver, &river.Config{Schema: s.schema, Workers: s.workers, Logger: quietLog()})
	if err != nil {
		return errors.Join(fmt.Errorf("river: insert client: %w", err), s.close(ctx))
	}
	return nil
}

func (s *riverSystem[TTx]) Name() string     { return "river" }
func (s *riverSystem[TTx]) Database() string { return s.db }

// Insert enqueues n jobs with one InsertMany (COPY on Postgres).
func (s *riverSystem[TTx]) Insert(ctx context.Context, n int) error {
	ps := make([]river.InsertManyParams, n)
	for i := range ps {
		ps[i].Args = noopArgs{}
	}
	_, err := s.inserts.InsertMany(ctx, ps)
	return err
}

// InsertOne enqueues one job with Insert.
func (s *riverSystem[TTx]) InsertOne(ctx context.Context) error {
	_, err := s.inserts.Insert(ctx, noopArgs{}, nil)
	return err
}

// Start starts a fresh working client with the fetch timings River's own
// benchmark uses (its fastest), and workers as MaxWorkers.
func (s *riverSystem[TTx]) Start(ctx context.Context, workers int, hook bench.Hook) error {
	s.hook = hook
	c, err := river.NewClient(s.driver, &river.Config{
		Schema:            s.schema,
		FetchCooldown:     2 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
		Workers:           s.workers,
		Logger:            quietLog(),
	})
	if err != nil {
		return fmt.Errorf("river: client: %w", err)
	}
	s.client = c
	return c.Start(context.WithoutCancel(ctx))
}

// Stop stops the working client; River's Stop waits for running jobs and
// their completions.
func (s *riverSystem[TTx]) Stop(ctx context.Context) error {
	if s.client == nil {
		return nil
	}
	err := s.client.Stop(ctx)
	s.client = nil
	return err
}

// Close drops the schema or file.
func (s *riverSystem[TTx]) Close(ctx context.Context) error {
	return errors.Join(s.Stop(ctx), s.close(ctx))
}

func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}
