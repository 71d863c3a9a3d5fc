package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/windforce/windforce/spine"
)

// DefaultQueryTimeout bounds each store operation when Options.QueryTimeout
// is zero, so a lock pile-up fails calls instead of exhausting the pool
// (river#1059).
const DefaultQueryTimeout = 30 * time.Second

// Notification channels (each suffixed with the schema, see channelName).
// On baseChannel the payload is a tag whose workers have work (enqueue
// wake-ups); on baseDoneChannel it is a comma-separated list of job ids
// that became terminal (completion wake-ups for waiters); on
// baseDispatchChannel it is "job_id claim_token worker", a job dispatched
// at enqueue (spine/dispatch.go), followed by a line with the job itself
// when it fits (enqueue.sql, listen.go).
const (
	baseChannel         = "windforce_job"
	baseDoneChannel     = "windforce_done"
	baseDispatchChannel = "windforce_dispatch"
)

// Options tunes a Driver. The zero value serves production defaults.
type Options struct {
	// Schema, when set, is created if missing and becomes the search_path of
	// every connection, and suffixes the notification channel, so tests
	// (or tenants) sharing one server are isolated from each other.
	Schema string
	// MaxConns bounds the pool; zero keeps pgxpool's default (or the URL's
	// pool_max_conns).
	MaxConns int32
	// Logger receives the listener's connection troubles; nil discards.
	Logger *slog.Logger
	// QueryTimeout bounds each operation; zero means DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Tracer, when set, observes the pool's statements and batches
	// (pgx.QueryTracer, also pgx.BatchTracer): for tests and diagnostics.
	Tracer pgx.QueryTracer
}

// Driver is the Postgres driver under the store core, safe for concurrent
// use by many goroutines and many processes on many machines.
type Driver struct {
	pool    *pgxpool.Pool
	log     *slog.Logger
	timeout time.Duration
	channel string
	// doneChannel carries completion wake-ups (see baseDoneChannel).
	doneChannel string

	// keepalive is the listener's quiet spell before a ping (tests shorten it).
	keepalive time.Duration
	// listenCfg is the listener connection's configuration (listenerConfig).
	listenCfg *pgx.ConnConfig
	wakeups   spine.Wakeups
	// completions is fed by the listener from doneChannel: jobs finished
	// by any process on this database.
	completions spine.Completions
	// dispatchChannel carries dispatches (see baseDispatchChannel), which
	// the listener routes to the inboxes of this process's workers.
	dispatchChannel string
	dispatches      spine.Dispatches
	// horizon is the final prefix of event_outbox this process's
	// EventsAfter reads have found (events.go).
	horizon eventHorizon

	// exec runs operations on the pool (Executor).
	exec *executor

	mu       sync.Mutex
	listener *listener // started by the first Subscribe
	closed   bool
}

// Open connects to the Postgres at url and, when opts.Schema is set,
// creates that schema. It does not migrate: call Migrate.
func Open(ctx context.Context, url string, opts Options) (*Driver, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: parse url: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.Schema != "" {
		cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{opts.Schema}.Sanitize()
	}
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = opts.Tracer
	}
	listenCfg := listenerConfig(cfg.ConnConfig, opts.Schema)
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		// The spine returns times in UTC whatever the session time zone is.
		conn.TypeMap().RegisterType(&pgtype.Type{
			Name: "timestamptz", OID: pgtype.TimestamptzOID,
			Codec: &pgtype.TimestamptzCodec{ScanLocation: time.UTC},
		})
		registerUUID(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	s := &Driver{
		pool:    pool,
		log:     opts.Logger,
		timeout: opts.QueryTimeout,
		channel: channelName(baseChannel, opts.Schema),

		doneChannel:     channelName(baseDoneChannel, opts.Schema),
		dispatchChannel: channelName(baseDispatchChannel, opts.Schema),

		keepalive: listenKeepalive,
		listenCfg: listenCfg,
	}
	s.exec = &executor{d: s, q: pool}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.timeout <= 0 {
		s.timeout = DefaultQueryTimeout
	}
	if err := s.prepareSchema(ctx, opts.Schema); err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// prepareSchema creates the schema (which also proves the server answers),
// or pings when there is none to create.
func (s *Driver) prepareSchema(ctx context.Context, schema string) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	if schema == "" {
		if err := s.pool.Ping(ctx); err != nil {
			return fmt.Errorf("open postgres: %w", err)
		}
		return nil
	}
	_, err := s.pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pgx.Identifier{schema}.Sanitize())
	// Two servers creating the schema at once can race inside IF NOT
	// EXISTS; the loser sees a duplicate, which is what it wanted.
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P06" || pgErr.Code == "23505") {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("open postgres: create schema %s: %w", schema, err)
	}
	return nil
}

// channelName is the notification channel base for schema. Channel names
// are identifiers, so they are cut to Postgres's 63-byte limit.
func channelName(base, schema string) string {
	ch := base
	if schema != "" {
		ch += "_" + schema
	}
	if len(ch) > 63 {
		ch = ch[:63]
	}
	return ch
}

// Pool returns the connection pool, for a library user who wants to open
// a transaction of its own and enqueue in it through the core
// (TxExecutor, store.Store.EnqueueTx).
func (s *Driver) Pool() *pgxpool.Pool { return s.pool }

// Close stops the listener, waits for it, and closes the pool. The Driver
// must not be used afterwards.
func (s *Driver) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	l := s.listener
	s.mu.Unlock()
	if l != nil {
		l.stop()
	}
	s.pool.Close()
}

// op bounds one operation by the query timeout.
func (s *Driver) op(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

// inTx runs fn in a transaction on the pool, committing when it returns nil.
func (s *Driver) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return translate(err)
	}
	// After Commit this is a no-op; on a canceled ctx pgx closes the
	// connection, which rolls back just the same.
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return translate(err)
	}
	return nil
}
