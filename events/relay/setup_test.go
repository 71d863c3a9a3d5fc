package relay_test

import (
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.uber.org/goleak"

	"github.com/windforce/windforce/events/relay"
	"github.com/windforce/windforce/internal/eventtest"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// db is one test database: open gives another store on it (more than one
// only on Postgres: many servers on one database).
type db struct {
	name string
	open func(t *testing.T) *store.Store
}

// eachDB runs fn on a fresh Postgres schema and a fresh SQLite file, in
// parallel.
func eachDB(t *testing.T, fn func(t *testing.T, d db)) {
	t.Helper()
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		url, schema := testdb.PostgresSchema(t)
		fn(t, db{name: "postgres", open: func(t *testing.T) *store.Store {
			d, err := postgres.Open(t.Context(), url, postgres.Options{Schema: schema, MaxConns: 8, Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			return migrated(t, store.New(d))
		}})
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := testdb.SQLitePath(t)
		fn(t, db{name: "sqlite", open: func(t *testing.T) *store.Store {
			d, err := sqlite.Open(t.Context(), path, sqlite.Options{Logger: quiet()})
			if err != nil {
				t.Fatal(err)
			}
			return migrated(t, store.New(d))
		}})
	})
}

func migrated(t *testing.T, s *store.Store) *store.Store {
	t.Helper()
	t.Cleanup(s.Close)
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func quiet() *slog.Logger {
	if os.Getenv("WINDFORCE_TEST_RELAY_LOG") == "1" {
		return slog.Default()
	}
	return slog.New(slog.DiscardHandler)
}

// event is one outbox row a test wrote.
type event struct {
	seq     int64
	id      uuid.UUID
	subject string
	typ     string
}

// putEvent writes one outbox row as a state change would, in a
// transaction of its own.
// Its data carries n, its place among the subject's events, so a receiver
// can check the order by itself.
func putEvent(t *testing.T, s *store.Store, ws, typ, subject string, n int) event {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	data := fmt.Sprintf(`{"id":%q,"status":%q,"n":%d}`, subject, typ, n)
	var seq int64
	var err error
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		err = d.Pool().QueryRow(t.Context(), `INSERT INTO event_outbox (id, workspace, type, subject, time, data)
			VALUES ($1, $2, $3, $4, now(), $5::jsonb) RETURNING seq`, id, ws, typ, subject, data).Scan(&seq)
	case *sqlite.Driver:
		err = d.DB().QueryRowContext(t.Context(), `INSERT INTO event_outbox (id, workspace, type, subject, time, data)
			VALUES (?, ?, ?, ?, ?, ?) RETURNING seq`, id.String(), ws, typ, subject, time.Now().UnixMicro(), data).Scan(&seq)
	default:
		t.Fatalf("no event writer for %T", d)
	}
	if err != nil {
		t.Fatalf("insert event: %v", err)
	}
	return event{seq: seq, id: id, subject: subject, typ: typ}
}

// jobLife is the types of one job's events, in order.
var jobLife = []string{"job.queued", "job.started", "job.retrying", "job.started", "job.succeeded"}

// startRelay starts a relay over s with test timings, stopped at cleanup.
func startRelay(t *testing.T, s *store.Store, timeout time.Duration) *relay.Relay {
	t.Helper()
	r := &relay.Relay{Store: s, Poll: 100 * time.Millisecond, Timeout: timeout, Concurrency: relayConcurrency, Logger: quiet()}
	if err := r.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return r
}

// eventually is eventtest.Eventually.
var eventually = eventtest.Eventually

// relayConcurrency is the test relays' sends in flight per sink.
var relayConcurrency = 4
