package server

import (
	"container/list"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Timeouts of the HTTP server (NewHTTPServer). Long answers — ?wait and
// logs ?follow=1 — set their own write deadlines per request.
const (
	// HeaderTimeout bounds reading a request's header.
	HeaderTimeout = 10 * time.Second
	// BodyTimeout bounds reading a request's body (after its header) by
	// default (HTTPConfig.BodyTimeout).
	BodyTimeout = 60 * time.Second
	// WriteTimeout bounds a request from its header to its answer's last
	// byte, so a client that never reads holds nothing for ever. A sync
	// or deploy of a big repository fits well within it.
	WriteTimeout = 10 * time.Minute
	// IdleTimeout closes a keep-alive connection with no request.
	IdleTimeout = 60 * time.Second
	// drainTimeout bounds reading the unread rest of a body the handler
	// answered without (net/http drains up to 256 KiB to keep the
	// connection).
	drainTimeout = 2 * time.Second
	// maxHeaderBytes bounds a request's header; API headers are small.
	maxHeaderBytes = 64 << 10
)

// HTTPConfig is how NewHTTPServer serves.
type HTTPConfig struct {
	// MaxConns bounds open connections (ConnLimit); ≤ 0 means no bound.
	MaxConns int
	// BodyTimeout bounds reading a request's body; zero means BodyTimeout.
	BodyTimeout time.Duration
	Logger      *slog.Logger
}

// NewHTTPServer is the http.Server every windforce process serves its API
// with, and the listener wrapper that bounds its connections (ConnLimit).
// Serve with srv.Serve(wrap(ln)).
func NewHTTPServer(h http.Handler, cfg HTTPConfig) (srv *http.Server, wrap func(net.Listener) net.Listener) {
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = BodyTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	srv = &http.Server{Handler: deadlines(h, cfg.BodyTimeout), ReadHeaderTimeout: HeaderTimeout, IdleTimeout: IdleTimeout,
		MaxHeaderBytes: maxHeaderBytes, ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)}
	if cfg.MaxConns <= 0 {
		return srv, func(ln net.Listener) net.Listener { return ln }
	}
	lim := NewConnLimit(cfg.MaxConns, cfg.Logger)
	srv.ConnState = lim.ConnState
	return srv, lim.Listener
}

// deadlines sets a request's read and write deadlines. The body must
// arrive within bodyTimeout; once it has been read whole the read deadline
// is lifted, because net/http's background read (which notices a client
// that went away) would otherwise cancel the request's context when it
// passes — long handlers (a sync, ?wait) must keep theirs. http.Server's
// own ReadTimeout and WriteTimeout cannot be lifted per request this way.
//
// A handler that answers without reading the body (a 401, a 413) leaves
// net/http to drain a small rest before answering: that drain gets only
// drainTimeout, so a client announcing a body it never sends holds a busy
// connection (one the bound cannot take back) for that long, not for the
// whole body timeout; the connection then closes after the answer.
func deadlines(h http.Handler, bodyTimeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
		var body *liftOnEOF
		if r.Body != nil && r.Body != http.NoBody {
			if rc.SetReadDeadline(time.Now().Add(bodyTimeout)) == nil {
				body = &liftOnEOF{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
				r.Body = body
			}
		}
		h.ServeHTTP(w, r)
		if body != nil && !body.ended() {
			// net/http decides by the body's own type: a large rest closes
			// the connection after the answer (and lets the client read
			// it), a small one is drained — within drainTimeout.
			r.Body = body.ReadCloser
			_ = rc.SetReadDeadline(time.Now().Add(drainTimeout))
		}
	})
}

// liftOnEOF lifts the read deadline once the body has been read whole (or
// its read failed).
type liftOnEOF struct {
	io.ReadCloser
	lift func()
	once sync.Once
	done atomic.Bool
}

// Read reads the body and lifts the deadline at its end.
func (b *liftOnEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.done.Store(true)
		b.once.Do(b.lift)
	}
	return n, err
}

// ended reports whether the body was read to its end (or failed).
func (b *liftOnEOF) ended() bool { return b.done.Load() }

// ConnLimit bounds the connections a listener holds open. At the bound a
// new connection takes the place of the connection that has been idle
// longest (a keep-alive connection between requests, or one that has not
// sent a byte yet): idle connections, however many a client opens, never
// keep others out. Only when every connection is busy with a request is a
// new one answered 503 and closed. A connection counts from its accept to
// its close, so the process's file descriptors stay bounded too.
type ConnLimit struct {
	max int
	log *slog.Logger

	mu     sync.Mutex
	open   int
	idle   *list.List // of *limitedConn, longest idle first
	warned time.Time  // last "at the bound" log line
}

// NewConnLimit bounds connections to n (at least 1).
func NewConnLimit(n int, log *slog.Logger) *ConnLimit {
	return &ConnLimit{max: max(n, 1), log: log, idle: list.New()}
}

// Listener wraps ln so its connections count against the bound.
func (l *ConnLimit) Listener(ln net.Listener) net.Listener {
	return &limitedListener{Listener: ln, l: l}
}

// ConnState is the http.Server hook that tells the limit which
// connections are idle.
func (l *ConnLimit) ConnState(c net.Conn, st http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateNew, http.StateIdle:
		l.markIdle(lc)
	default: // active, hijacked, closed
		l.markBusy(lc)
	}
}

func (l *ConnLimit) markIdle(c *limitedConn) {
	if c.idle == nil && !c.closed {
		c.idle = l.idle.PushBack(c)
	}
}

func (l *ConnLimit) markBusy(c *limitedConn) {
	if c.idle != nil {
		l.idle.Remove(c.idle)
		c.idle = nil
	}
}

// admit counts c in, making room by closing the longest-idle connection
// when at the bound. It reports false when every connection is busy.
func (l *ConnLimit) admit() (bool, *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var victim *limitedConn
	if l.open >= l.max {
		front := l.idle.Front()
		if front == nil {
			l.warnFull()
			return false, nil
		}
		victim = front.Value.(*limitedConn)
		l.markBusy(victim)
		l.open-- // counted out now; its Close will not count it again
		victim.closed = true
	}
	l.open++
	return true, victim
}

// warnFull logs, at most once a minute, that connections are refused.
func (l *ConnLimit) warnFull() {
	if time.Since(l.warned) < time.Minute {
		return
	}
	l.warned = time.Now()
	l.log.Warn("connection bound reached with every connection busy: new connections get 503 (WINDFORCE_MAX_CONNECTIONS)", "max", l.max)
}

// release counts a closing connection out once.
func (l *ConnLimit) release(c *limitedConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.markBusy(c)
	if !c.closed {
		c.closed = true
		l.open--
	}
}

type limitedListener struct {
	net.Listener
	l *ConnLimit
}

// Accept returns the next connection the bound admits; one it does not is
// answered 503 and closed here, so Serve never sees it.
func (ll *limitedListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ok, victim := ll.l.admit()
		if victim != nil {
			_ = victim.Conn.Close()
		}
		if ok {
			return &limitedConn{Conn: c, l: ll.l}, nil
		}
		refuse(c)
	}
}

// refuse answers a connection over the bound without reading its request.
func refuse(c net.Conn) {
	const body = "too many connections: every connection is busy; retry shortly\n"
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n" +
		"Connection: close\r\nRetry-After: 1\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
	_ = c.Close()
}

// limitedConn is a connection counted by its ConnLimit. idle and closed
// are guarded by the limit's mutex.
type limitedConn struct {
	net.Conn
	l      *ConnLimit
	idle   *list.Element
	closed bool
}

// Close closes the connection and counts it out.
func (c *limitedConn) Close() error {
	c.l.release(c)
	err := c.Conn.Close()
	if errors.Is(err, net.ErrClosed) { // closed already to make room
		return nil
	}
	return err
}
