package server_test

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/server"
)

// bodyTimeout is the body timeout of the servers in these tests.
const bodyTimeout = 300 * time.Millisecond

// serveLimited serves h with NewHTTPServer, its connections bounded to
// max, and returns its address.
func serveLimited(t *testing.T, h http.Handler, max int) string {
	t.Helper()
	return serveHTTP(t, h, server.HTTPConfig{MaxConns: max, BodyTimeout: bodyTimeout})
}

// serveHTTP serves h with NewHTTPServer configured by cfg and returns its
// address.
func serveHTTP(t *testing.T, h http.Handler, cfg server.HTTPConfig) string {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	srv, wrap := server.NewHTTPServer(h, cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(wrap(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// get sends one GET on conn and reads its status line and body.
func get(t *testing.T, c net.Conn, path string) (string, error) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return "", err
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.Status, nil
}

// TestIdleConnectionsDoNotExhaust: a client opening many more connections
// than the bound — keep-alive connections left idle after a request, and
// connections that never send a byte — cannot keep /healthz out: the
// longest idle connection makes room. (On a server without the bound,
// such connections hold one file descriptor each until the process runs
// out and refuses everything with "too many open files".)
func TestIdleConnectionsDoNotExhaust(t *testing.T) {
	t.Parallel()
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	addr := serveLimited(t, ok, 8)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 40 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if i%2 == 0 { // a keep-alive connection, idle after one request
			if _, err := get(t, c, "/healthz"); err != nil && i < 8 {
				t.Fatalf("request %d: %v", i, err)
			}
		}
	}
	for i := range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		status, err := get(t, c, "/healthz")
		c.Close()
		if err != nil || !strings.HasPrefix(status, "200") {
			t.Fatalf("healthz %d behind idle connections: %q %v", i, status, err)
		}
	}
	// The server closed the connections it evicted: most of the idle ones
	// read EOF now (a closed socket, its descriptor freed).
	closed := 0
	for _, c := range conns { // a closed one reads EOF at once; an open one waits out its deadline
		_ = c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF || isReset(err) {
			closed++
		}
	}
	if closed < len(conns)-8 {
		t.Fatalf("only %d of %d idle connections were closed; the bound is 8", closed, len(conns))
	}
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// TestBusyConnectionsGet503: when every connection is busy with a request,
// one more connection is answered 503 at once (not left hanging), and is
// served again once a request ends.
func TestBusyConnectionsGet503(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			<-release
		}
		_, _ = io.WriteString(w, "ok")
	})
	addr := serveLimited(t, h, 2)
	done := make(chan error, 2)
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() { _, err := get(t, c, "/hold"); done <- err }()
	}
	<-entered
	<-entered
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	status, err := get(t, c, "/healthz")
	c.Close()
	if err != nil || !strings.HasPrefix(status, "503") {
		t.Fatalf("a connection over a busy bound got %q %v, want 503", status, err)
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// The two connections turn idle just after their answers: then one
	// makes room again.
	healthzSoon(t, addr, "after the busy requests")
}

// TestBodyDeadline: a body that stalls is cut at the body timeout, but a
// request that outlives it once its body is read (a ?wait, a sync) keeps
// its context: the lifted deadline does not cancel it. (net/http's own
// ReadTimeout would cancel the context of every request older than it.)
func TestBodyDeadline(t *testing.T) {
	t.Parallel()
	type outcome struct {
		readErr error
		ctxErr  error
	}
	got := make(chan outcome, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		o := outcome{readErr: err}
		if err == nil {
			select { // outlive the body timeout several times over
			case <-r.Context().Done():
			case <-time.After(4 * bodyTimeout):
			}
			o.ctxErr = r.Context().Err()
		}
		got <- o
		_, _ = io.WriteString(w, "ok")
	})
	addr := serveLimited(t, h, 0)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "POST /long HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	if o := <-got; o.readErr != nil || o.ctxErr != nil {
		t.Fatalf("a long request after its body: read %v, context %v; want neither", o.readErr, o.ctxErr)
	}
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	_, _ = io.WriteString(slow, "POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{")
	select {
	case o := <-got:
		if o.readErr == nil {
			t.Fatal("a stalled body was read without error")
		}
	case <-time.After(20 * bodyTimeout):
		t.Fatal("a stalled body was not cut at the body timeout")
	}
}

// TestUnsentBodyDoesNotHoldConnection: a client that announces a body and
// never sends it, on a route that answers without reading it (a 401), gets
// its answer within the short drain timeout and its connection closed, so
// such connections cannot keep the bound full for the body timeout.
func TestUnsentBodyDoesNotHoldConnection(t *testing.T) {
	t.Parallel()
	deny := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			_, _ = io.WriteString(w, "ok")
			return
		}
		http.Error(w, "no token", http.StatusUnauthorized)
	})
	// A long body timeout: the old drain would wait it out.
	addr := serveHTTP(t, deny, server.HTTPConfig{MaxConns: 2, BodyTimeout: time.Minute})
	for i := range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "POST /api/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d with an unsent body got no answer: %v", i, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized || !res.Close {
			t.Fatalf("connection %d: %d, close %t; want 401 and the connection closed", i, res.StatusCode, res.Close)
		}
	}
	healthzSoon(t, addr, "behind two unsent bodies")
}

// healthzSoon polls GET /healthz on fresh connections to addr until one
// answers 200, failing after 10 s.
func healthzSoon(t *testing.T, addr, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		status, err := get(t, c, "/healthz")
		c.Close()
		if err == nil && strings.HasPrefix(status, "200") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz %s: %q %v", what, status, err)
		}
		time.Sleep(10 * time.Millisecond) // a poll interval
	}
}

// TestOversizedBodyGets413: a body far over what the handler reads (a 413
// answered from Content-Length) still reaches the client as the answer,
// not as a reset connection while it is still sending.
func TestOversizedBodyGets413(t *testing.T) {
	t.Parallel()
	refuse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	})
	addr := serveHTTP(t, refuse, server.HTTPConfig{BodyTimeout: time.Minute})
	big := strings.Repeat("a", 2<<20)
	for i := range 5 {
		res, err := http.Post("http://"+addr+"/run", "application/json", strings.NewReader(big))
		if err != nil {
			t.Fatalf("post %d of a 2 MiB body: %v, want the 413", i, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("post %d: %d, want 413", i, res.StatusCode)
		}
	}
}
