package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events/relay"
	"github.com/windforce/windforce/events/sink"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// relayKillTimeout is the helper relay's send timeout: a claimed
// delivery's lease runs out this plus 5 s after its claim.
const relayKillTimeout = 2 * time.Second

// helperRelay runs the event relay (what every server runs) until it is
// killed.
func helperRelay(ctx context.Context, s spine.Store) error {
	core, ok := s.(*store.Store)
	if !ok {
		return fmt.Errorf("helper store is a %T", s)
	}
	r := &relay.Relay{Store: core, Poll: 100 * time.Millisecond, Timeout: relayKillTimeout}
	if err := r.Start(ctx); err != nil {
		return err
	}
	fmt.Println("relay started")
	select {} // until SIGKILL
}

// writeEvent writes one outbox row of subject job as a committed state
// change leaves it, with its place n in the job's life in its data.
func writeEvent(t *testing.T, s *store.Store, typ, job string, n int) uuid.UUID {
	t.Helper()
	id := uuid.Must(uuid.NewV7())
	data := fmt.Sprintf(`{"id":%q,"n":%d}`, job, n)
	var err error
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		_, err = d.Pool().Exec(t.Context(), `INSERT INTO event_outbox (id, workspace, type, subject, time, data)
			VALUES ($1, 'ws', $2, $3, now(), $4::jsonb)`, id, typ, job, data)
	case *sqlite.Driver:
		_, err = d.DB().ExecContext(t.Context(), `INSERT INTO event_outbox (id, workspace, type, subject, time, data)
			VALUES (?, 'ws', ?, ?, ?, ?)`, id.String(), typ, job, time.Now().UnixMicro(), data)
	}
	if err != nil {
		t.Fatalf("write event: %v", err)
	}
	return id
}

// blockingReceiver holds its first request open until released (the
// relay is killed meanwhile) and accepts every other one, recording the
// event ids in arrival order.
type blockingReceiver struct {
	arrived chan struct{} // closed when the first request is in
	release chan struct{}
	once    sync.Once

	mu  sync.Mutex
	ids []string
	ns  []int
}

func (b *blockingReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	first := false
	b.once.Do(func() { first = true })
	if first {
		close(b.arrived)
		<-b.release
		http.Error(w, "too late", http.StatusServiceUnavailable)
		return
	}
	var ce struct {
		ID   string
		Data struct{ N int }
	}
	_ = json.Unmarshal(body, &ce)
	b.mu.Lock()
	b.ids, b.ns = append(b.ids, ce.ID), append(b.ns, ce.Data.N)
	b.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// TestRelaySIGKILLBetweenCommitAndPublish: the relay's process is
// SIGKILLed while it sends the first event of a job (committed, claimed,
// the receiver holding the request), and more events are written while
// no relay runs; after a restart every event is delivered, each job's
// in order, the interrupted one again (at least once), nothing lost; on
// both databases.
func TestRelaySIGKILLBetweenCommitAndPublish(t *testing.T) {
	for name, mk := range targets(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tg := mk(t)
			s := tg.openT(t).(*store.Store)
			rc := &blockingReceiver{arrived: make(chan struct{}), release: make(chan struct{})}
			srv := httptest.NewServer(rc)
			defer srv.Close()
			defer close(rc.release)
			if _, err := s.CreateSink(t.Context(), sink.Sink{Workspace: "ws", ID: "hook", Kind: sink.KindWebhook, URL: srv.URL}); err != nil {
				t.Fatal(err)
			}
			life := []string{"job.queued", "job.started", "job.succeeded"}
			var want []uuid.UUID
			want = append(want, writeEvent(t, s, life[0], "job-a", 0))

			h := startHelper(t, tg, "relay")
			h.line(t, "relay started")
			select {
			case <-rc.arrived:
			case <-time.After(30 * time.Second):
				t.Fatalf("the relay sent nothing; stderr:\n%s", h.stderr())
			}
			h.kill(t) // mid-send: the delivery is claimed, not settled
			ds, err := s.ListDeliveries(t.Context(), "ws", "hook", sink.DeliveryFilter{})
			if err != nil || len(ds) != 1 || ds[0].Status != sink.StatusPending || ds[0].Attempts != 1 {
				t.Fatalf("after the kill: %+v, %v", ds, err)
			}
			// More of the job's life while no relay runs.
			for n := 1; n < len(life); n++ {
				want = append(want, writeEvent(t, s, life[n], "job-a", n))
			}

			start := time.Now()
			h2 := startHelper(t, tg, "relay")
			h2.line(t, "relay started")
			deadline := time.Now().Add(30 * time.Second)
			for {
				ds, err := s.ListDeliveries(t.Context(), "ws", "hook", sink.DeliveryFilter{Status: sink.StatusDelivered})
				if err != nil {
					t.Fatal(err)
				}
				if len(ds) == len(want) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d delivered 30 s after the restart; stderr:\n%s", len(ds), len(want), h2.stderr())
				}
				time.Sleep(50 * time.Millisecond) // polling the deliveries with a deadline
			}
			t.Logf("%s: all delivered %s after the restart (the interrupted lease runs out %s after its claim)",
				name, time.Since(start).Round(100*time.Millisecond), relayKillTimeout+5*time.Second)
			rc.mu.Lock()
			defer rc.mu.Unlock()
			if len(rc.ids) != len(want) {
				t.Fatalf("the receiver accepted %v, want %v", rc.ids, want)
			}
			for i, id := range want {
				if rc.ids[i] != id.String() || rc.ns[i] != i {
					t.Fatalf("accepted %v (n %v), want %v in order", rc.ids, rc.ns, want)
				}
			}
		})
	}
}
