package crashtest

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/sqlite"
)

// TestSQLiteSurvivesRepeatedSIGKILL kills a process writing to a SQLite file
// five times mid-load. Afterwards the file passes integrity_check and every
// job whose enqueue was acknowledged still exists and can be run to the end.
func TestSQLiteSurvivesRepeatedSIGKILL(t *testing.T) {
	t.Parallel()
	tg := targets(t)["sqlite"](t)
	acked := map[uuid.UUID]bool{}
	for round := range 5 {
		h := startHelper(t, tg, "sqlite-load")
		// Let it write a while; the kill lands at a different point each round.
		for range 40 + 37*round {
			acked[parseID(t, h.line(t, "enqueued "))] = true
		}
		h.kill(t)
	}

	db, err := sql.Open("sqlite", tg.url)
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q, %v; want ok", check, err)
	}
	db.Close()

	d, err := sqlite.Open(context.Background(), tg.url, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(d)
	t.Cleanup(s.Close)
	// Jobs claimed by a killed process are requeued by the reaper.
	later := time.Now().Add(time.Hour)
	if _, err := s.Reap(context.Background(), spine.ReapParams{Now: later, ZombieTimeout: time.Minute, RestartLimit: 10, Limit: 100000}); err != nil {
		t.Fatal(err)
	}
	ids := make([]uuid.UUID, 0, len(acked))
	for id := range acked {
		ids = append(ids, id)
	}
	runToCompletion(t, s, ids, offsetClock(later))
	for _, id := range ids {
		if job := getJob(t, s, id); job.Status != spine.StatusSuccess {
			t.Fatalf("acknowledged job %s ended %s", id, job.Status)
		}
	}
}
