package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/runner/wftoken"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
)

// newToken creates a token through the API and returns its text.
func (e *env) newToken(scopes string) string {
	e.t.Helper()
	return e.call("POST", "/api/tokens", adminToken, `{"workspace":"ws","scopes":[`+scopes+`]}`).want(201).obj()["token"].(string)
}

// TestWaitersPerToken: a token holds at most MaxWaiters ?wait requests
// open; one more is 429 and enqueues nothing, without ?wait it runs, and
// another token is counted apart.
func TestWaitersPerToken(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, base *env) {
		e := base.second(t, func(c *server.Config) { c.MaxWaiters = 2 })
		tok := e.newToken(`"run"`)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		ended := make(chan struct{}, 2)
		for range 2 { // no worker runs: both waits hold until canceled
			go func() {
				defer func() { ended <- struct{}{} }()
				req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/api/w/ws/jobs/run/hello/greet?wait=1m", strings.NewReader(`{"name":"W"}`))
				req.Header.Set("Authorization", "Bearer "+tok)
				if res, err := http.DefaultClient.Do(req); err == nil {
					res.Body.Close()
				}
			}()
		}
		waitFor(t, "two waiting jobs", func() bool { return e.jobCount() == 2 })
		r := e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=1m", tok, `{"name":"X"}`)
		r.wantError(http.StatusTooManyRequests, server.CodeLimit)
		if !strings.Contains(r.message(), "WINDFORCE_MAX_WAITERS_PER_TOKEN") {
			t.Errorf("429 message %q does not name the setting", r.message())
		}
		if n := e.jobCount(); n != 2 {
			t.Fatalf("the refused wait enqueued a job: %d jobs", n)
		}
		e.call("POST", "/api/w/ws/jobs/run/hello/greet", tok, `{"name":"X"}`).want(http.StatusCreated)
		other := e.newToken(`"run"`)
		e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=10ms", other, `{"name":"Y"}`).want(http.StatusAccepted)
		cancel()
		<-ended
		<-ended
		// Ended waits are counted out.
		waitFor(t, "a wait slot again", func() bool {
			return e.call("POST", "/api/w/ws/jobs/run/hello/greet?wait=10ms", tok, `{"name":"Z"}`).status == http.StatusAccepted
		})
	})
}

// TestFollowersPerToken: a token follows at most MaxFollowers log streams;
// one more is 429, and a closed stream frees its place.
func TestFollowersPerToken(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, base *env) {
		e := base.second(t, func(c *server.Config) { c.MaxFollowers = 1 })
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"F"}`).want(201).obj()["id"].(string)
		s := e.follow(t, id, "")
		if s.res.StatusCode != http.StatusOK {
			t.Fatalf("first follow answered %d", s.res.StatusCode)
		}
		r := e.call("GET", "/api/w/ws/jobs/"+id+"/logs?follow=1", adminToken, "")
		r.wantError(http.StatusTooManyRequests, server.CodeLimit)
		if !strings.Contains(r.message(), "WINDFORCE_MAX_FOLLOWERS_PER_TOKEN") {
			t.Errorf("429 message %q does not name the setting", r.message())
		}
		e.call("GET", "/api/w/ws/jobs/"+id+"/logs", adminToken, "").want(http.StatusOK)
		s.cancel()
		<-s.done
		waitFor(t, "a follow slot again", func() bool {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/api/w/ws/jobs/"+id+"/logs?follow=1", nil)
			req.Header.Set("Authorization", "Bearer "+adminToken)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				return false
			}
			defer res.Body.Close()
			return res.StatusCode == http.StatusOK
		})
	})
}

// TestChildDepth: a job that enqueues a child that enqueues a child … is
// refused past MaxChildDepth with 422 and no job; a top-level job may
// enqueue children again.
func TestChildDepth(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, base *env) {
		e := base.second(t, func(c *server.Config) { c.MaxChildDepth = 2 })
		id := e.call("POST", "/api/w/ws/jobs/run/hello/greet", adminToken, `{"name":"0"}`).want(201).obj()["id"].(string)
		var tok string
		for depth := 1; depth <= 2; depth++ {
			tok = claimToken(t, e, id)
			id = e.call("POST", "/api/w/ws/jobs/run/hello/greet", tok, `{"name":"c"}`).want(201).obj()["id"].(string)
		}
		tok = claimToken(t, e, id) // the job at depth 2
		before := e.jobCount()
		r := e.call("POST", "/api/w/ws/jobs/run/hello/greet", tok, `{"name":"deep"}`)
		if d := r.wantError(http.StatusUnprocessableEntity, server.CodeLimit); d["max_depth"] != float64(2) {
			t.Errorf("details %v, want max_depth 2", d)
		}
		if !strings.Contains(r.message(), "WINDFORCE_MAX_CHILD_DEPTH") {
			t.Errorf("422 message %q does not name the setting", r.message())
		}
		if n := e.jobCount(); n != before {
			t.Fatalf("the refused child was enqueued: %d jobs, had %d", n, before)
		}
	})
}

// claimToken claims the waiting job id (the only one waiting) and mints its
// WF_TOKEN, as a worker would.
func claimToken(t *testing.T, e *env, id string) string {
	t.Helper()
	claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "test", Tags: []string{"default"}, Limit: 1})
	if err != nil || len(claimed) != 1 || claimed[0].ID.String() != id {
		t.Fatalf("claim %s: %v %v", id, claimed, err)
	}
	tok, err := wftoken.Mint(secret, wftoken.Claims{JobID: uuid.MustParse(id), Workspace: "ws",
		ClaimToken: claimed[0].ClaimToken, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestMetricsToken: with a metrics token /metrics needs it (any case of
// the scheme); without one it is open.
func TestMetricsToken(t *testing.T) {
	t.Parallel()
	e := newSQLiteEnv(t)
	e.call("GET", "/metrics", "", "").want(http.StatusOK)
	guarded := e.second(t, func(c *server.Config) { c.MetricsToken = "metrics-secret" })
	guarded.call("GET", "/metrics", "", "").want(http.StatusUnauthorized)
	guarded.call("GET", "/metrics", "wrong", "").want(http.StatusUnauthorized)
	guarded.call("GET", "/metrics", adminToken, "").want(http.StatusUnauthorized)
	guarded.call("GET", "/metrics", "metrics-secret", "").want(http.StatusOK)
	guarded.call("GET", "/metrics", "", "", "Authorization", "bearer metrics-secret").want(http.StatusOK)
}

// waitFor polls cond every 10 ms until it holds, failing after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // a poll interval, not a wait for an event
	}
}
