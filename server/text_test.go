package server_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
)

// TestRunRefusesLoneSurrogate: a lone UTF-16 surrogate escape in the input
// is the same 400 on both databases (SQLite would have stored it, Postgres
// refused it with its own error text), and creates no job.
func TestRunRefusesLoneSurrogate(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, body := range []string{`{"name":"\ud800"}`, `{"name":"\udc00x"}`, `{"\ud83d":1}`} {
			r := e.call("POST", "/api/w/"+ws+"/jobs/run/hello/greet", adminToken, body)
			r.wantError(http.StatusBadRequest, server.CodeBadRequest)
			if msg := string(r.body); !strings.Contains(msg, "surrogate") || strings.Contains(msg, "SQLSTATE") {
				t.Errorf("%s answered %s, want a message naming the lone surrogate and no driver text", body, msg)
			}
		}
		if n := e.jobCount(); n != 0 {
			t.Fatalf("refused runs created %d jobs", n)
		}
		// A proper pair is text and runs.
		e.call("POST", "/api/w/"+ws+"/jobs/run/hello/greet", adminToken, `{"name":"\ud83d\ude00"}`).want(http.StatusCreated)
	})
}

// TestPublicMessageHidesDriverText: an invalid or conflicting request that
// the database itself refused answers without the driver's text (SQL,
// constraint names, the value); errors of windforce's own keep theirs.
func TestPublicMessageHidesDriverText(t *testing.T) {
	pg := &pgconn.PgError{Code: "22P05", Message: "unsupported Unicode escape sequence", ConstraintName: "job_input"}
	for _, err := range []error{
		fmt.Errorf("enqueue: %w: %w", spine.ErrInvalid, pg),
		fmt.Errorf("enqueue: %w: %w", spine.ErrConflict, pg),
	} {
		msg := server.PublicMessage(err)
		if strings.Contains(msg, "Unicode") || strings.Contains(msg, "SQLSTATE") || strings.Contains(msg, "job_input") {
			t.Errorf("public message %q shows the driver's text", msg)
		}
	}
	own := fmt.Errorf("%w: priority out of range", spine.ErrInvalid)
	if msg := server.PublicMessage(own); msg != own.Error() {
		t.Errorf("public message of windforce's own error = %q, want %q", msg, own.Error())
	}
	if !errors.Is(own, spine.ErrInvalid) {
		t.Fatal("setup")
	}
}
