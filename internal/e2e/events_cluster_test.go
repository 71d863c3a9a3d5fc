package e2e_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/internal/eventtest"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
)

// eventsRelayTimeout is the servers' WINDFORCE_RELAY_TIMEOUT in the
// events tests: a delivery claimed by a killed server is claimable again
// this plus 5 s after its claim.
const eventsRelayTimeout = 3 * time.Second

// eventsCluster is one `windforce server`, restartable on the address it
// first took, and one `windforce worker` on a fresh Postgres database,
// with examples/hello synced into workspace ws, and a store of the
// test's own on that database to read what was committed while the
// server is dead.
type eventsCluster struct {
	env    []string
	addr   string
	server *proc
	api    api
	db     *store.Store
}

const eventsAdmin = "events-admin-0123456789abcdefghijk"

// startEventsCluster migrates a fresh database, starts the server and a
// worker of concurrency 4, and syncs examples/hello as source hello.
func startEventsCluster(t *testing.T) *eventsCluster {
	t.Helper()
	bun := requireBun(t)
	dbURL := testdb.PostgresDatabase(t)
	c := &eventsCluster{env: []string{"WINDFORCE_DATABASE_URL=" + dbURL, "WINDFORCE_OBJECT_CACHE=postgres",
		"WINDFORCE_SECRET=events-secret-0123456789abcdefghijk", "WINDFORCE_ADMIN_TOKEN=" + eventsAdmin,
		"WINDFORCE_FILE_SOURCES=" + os.TempDir(), "WINDFORCE_RELAY_TIMEOUT=" + eventsRelayTimeout.String(),
		"WINDFORCE_RELAY_POLL=200ms"}}
	c.startServer(t, "127.0.0.1:0")
	db, err := store.Open(t.Context(), dbURL, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open the test's store: %v", err)
	}
	t.Cleanup(db.Close)
	c.db = db
	dir := t.TempDir()
	t.Cleanup(func() { unseal(dir) })
	w := start(t, append(c.env, "WINDFORCE_URL="+c.api.url, "PATH="+pathWith(bun)),
		"worker", "--dir", dir, "--concurrency", "4", "--heartbeat", "200ms")
	w.line(t, "worker ")
	repo := gittest.New(t)
	repo.CopyDir(t, gittest.Example("hello"))
	repo.CommitPush(t, "hello example")
	c.api.do("POST", "/api/w/ws/sources", `{"id":"hello","url":"`+repo.URL+`","branch":"main"}`).want(t, http.StatusCreated)
	c.api.do("POST", "/api/w/ws/sources/hello/sync", "").want(t, http.StatusOK)
	return c
}

// startServer starts `windforce server` on listen; the first start's
// address is kept, so a restart serves the worker's WINDFORCE_URL again.
func (c *eventsCluster) startServer(t *testing.T, listen string) {
	t.Helper()
	c.server = start(t, c.env, "server", "--listen", listen, "--sync-interval", "0")
	url := c.server.line(t, "windforce server listening on ")
	c.addr = strings.TrimPrefix(url, "http://")
	c.api = api{t: t, url: url, token: eventsAdmin}
}

// killServer SIGKILLs the server and waits until it is gone.
func (c *eventsCluster) killServer(t *testing.T) {
	t.Helper()
	if err := c.server.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL the server: %v", err)
	}
	<-c.server.done
}

// restartServer starts the server again on the same database and address.
func (c *eventsCluster) restartServer(t *testing.T) {
	t.Helper()
	c.startServer(t, c.addr)
}

// addSink creates an event sink of workspace ws through the API and
// returns its secret ("" for nats).
func (c *eventsCluster) addSink(t *testing.T, body string) string {
	t.Helper()
	out := c.api.do("POST", "/api/w/ws/event-sinks", body).want(t, http.StatusCreated)
	secret, _ := out["secret"].(string)
	return secret
}

// enqueue runs hello/greet through the API and returns the job id.
func (c *eventsCluster) enqueue(t *testing.T, name string) string {
	t.Helper()
	return c.api.do("POST", "/api/w/ws/jobs/run/hello/greet", `{"name":"`+name+`"}`).want(t, http.StatusCreated)["id"].(string)
}

// waitJobsDone polls the database (the server may be dead: the worker
// writes to it directly) until no job of ws is queued or running.
func (c *eventsCluster) waitJobsDone(t *testing.T, within time.Duration) {
	t.Helper()
	eventually(t, within, "jobs still queued or running", func() bool {
		n, err := c.db.CountJobs(t.Context(), "ws")
		return err == nil && n[spine.StatusQueued]+n[spine.StatusRunning] == 0
	})
}

// outbox reads every event of ws the database holds, in seq order, once
// all of them are final. It counts the rows first (every transition has
// committed: the jobs are done and the server is dead or idle), then
// reads them as a relay does, until the outbox's horizon answers them all
// (on Postgres an event shows once every transaction that was open at
// its commit has ended, anywhere on the cluster).
func (c *eventsCluster) outbox(t *testing.T) []events.Event {
	t.Helper()
	n := c.outboxRows(t)
	var evs []events.Event
	eventually(t, 10*time.Second, fmt.Sprintf("the outbox's %d rows not all final", n), func() bool {
		var err error
		evs, err = c.db.EventsAfter(t.Context(), "ws", 0, store.MaxEventsLimit)
		return err == nil && len(evs) == n
	})
	return evs
}

// outboxRows counts the committed events of ws's outbox (a batch row holds
// span of them, store/postgres migration 0021).
func (c *eventsCluster) outboxRows(t *testing.T) int {
	t.Helper()
	pg, ok := c.db.Driver().(*postgres.Driver)
	if !ok {
		t.Fatalf("the events cluster runs on %T, not Postgres", c.db.Driver())
	}
	var n int
	if err := pg.Pool().QueryRow(t.Context(), `SELECT coalesce(sum(span), 0) FROM event_outbox WHERE workspace = 'ws'`).Scan(&n); err != nil {
		t.Fatalf("count the outbox: %v", err)
	}
	return n
}

// checkJobLives fails unless each job's events are job.queued,
// job.started, job.succeeded in seq order, and every job in jobs has
// them.
func checkJobLives(t *testing.T, evs []events.Event, jobs []string) {
	t.Helper()
	life := map[string][]string{}
	for _, ev := range evs {
		life[ev.Subject] = append(life[ev.Subject], string(ev.Type))
	}
	for _, id := range jobs {
		if _, ok := life[id]; !ok {
			t.Errorf("job %s has no event in the outbox", id)
		}
	}
	for subject, types := range life {
		if got := strings.Join(types, " "); got != "job.queued job.started job.succeeded" {
			t.Errorf("job %s: events %s, want job.queued job.started job.succeeded", subject, got)
		}
	}
}

// waitDelivered waits until n deliveries of sink id are delivered.
func (c *eventsCluster) waitDelivered(t *testing.T, id string, n int, within time.Duration) {
	t.Helper()
	eventually(t, within, "deliveries of "+id+" not all delivered", func() bool {
		counts, err := c.db.DeliveryCounts(t.Context(), "ws", id)
		return err == nil && counts[sink.StatusDelivered] == n && counts[sink.StatusPending]+counts[sink.StatusFailed] == 0
	})
}

// eventually is eventtest.Eventually.
var eventually = eventtest.Eventually

// cloudEvent is what the tests read of a delivered CloudEvent.
type cloudEvent struct {
	SpecVersion, ID, Source, Type, Subject string
	Data                                   json.RawMessage
}
