package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/spine"
)

// Listener timings. The keepalive ping finds a connection that died
// silently (a NAT dropping an idle flow) long before TCP keepalive would.
const (
	listenConnectTimeout = 10 * time.Second
	listenKeepalive      = 30 * time.Second
	listenMinBackoff     = 100 * time.Millisecond
	listenMaxBackoff     = 10 * time.Second
	subscribeWait        = 5 * time.Second
)

// Subscribe returns a channel that receives a value soon after a job is
// enqueued, retried, released, reopened or requeued by the reaper on one
// of tags (all tags when empty). The first call starts the listener and
// waits (a few seconds at most) until it listens, so a job enqueued after
// Subscribe returns is not missed.
func (s *Store) Subscribe(tags []string) (<-chan struct{}, func()) {
	ch, unsubscribe := s.wakeups.Subscribe(tags)
	if l := s.startListener(); l != nil {
		t := time.NewTimer(min(s.timeout, subscribeWait))
		defer t.Stop()
		select {
		case <-l.ready:
		case <-l.done:
		case <-t.C:
		}
	}
	return ch, unsubscribe
}

// startListener starts the listener once; nil after Close.
func (s *Store) startListener() *listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.listener == nil {
		s.listener = newListener(s.pool.Config().ConnConfig, s.channel, &s.wakeups, s.log, s.keepalive)
	}
	return s.listener
}

// listener holds one dedicated connection (outside the pool, so claims
// never wait behind it) that LISTENs on the store's channel and feeds each
// notification's tag to the Wakeups. It reconnects with backoff when the
// connection is lost, and then wakes every subscriber: notifications sent
// while it was away are lost, and workers must look for themselves.
type listener struct {
	cfg       *pgx.ConnConfig
	channel   string
	wakeups   *spine.Wakeups
	log       *slog.Logger
	keepalive time.Duration

	cancel    context.CancelFunc
	done      chan struct{} // closed when run returns
	ready     chan struct{} // closed after the first LISTEN
	readyOnce sync.Once
	pid       atomic.Uint32 // backend of the current connection, for tests
	pings     atomic.Int64  // keepalive pings sent, for tests
}

func newListener(cfg *pgx.ConnConfig, channel string, w *spine.Wakeups, log *slog.Logger, keepalive time.Duration) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{
		cfg: cfg, channel: channel, wakeups: w, log: log, keepalive: keepalive,
		cancel: cancel, done: make(chan struct{}), ready: make(chan struct{}),
	}
	go l.run(ctx)
	return l
}

// stop ends the listener and waits for its goroutine.
func (l *listener) stop() {
	l.cancel()
	<-l.done
}

// run connects, listens and receives until ctx ends, reconnecting with
// exponential backoff.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	delay := listenMinBackoff
	for attempt := 0; ; attempt++ {
		conn, err := l.listen(ctx)
		if err == nil {
			l.readyOnce.Do(func() { close(l.ready) })
			if attempt > 0 {
				// Subscribers were not covered while we were away.
				l.log.Info("job wake-up listener reconnected", "channel", l.channel)
				l.wakeups.NotifyAll()
			}
			delay = listenMinBackoff
			err = l.receive(ctx, conn)
			closeQuietly(conn)
		}
		if ctx.Err() != nil {
			return
		}
		l.log.Warn("job wake-up listener lost its connection; reconnecting",
			"channel", l.channel, "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, listenMaxBackoff)
	}
}

// listen opens the dedicated connection and LISTENs on the channel.
func (l *listener) listen(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, listenConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
		closeQuietly(conn)
		return nil, fmt.Errorf("listen: %w", err)
	}
	l.pid.Store(conn.PgConn().PID())
	return conn, nil
}

// receive feeds notifications to the Wakeups until the connection fails or
// ctx ends. A quiet spell of keepalive length is ended by a ping, which
// finds a dead connection.
func (l *listener) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wait, cancel := context.WithTimeout(ctx, l.keepalive)
		n, err := conn.WaitForNotification(wait)
		timedOut := wait.Err() != nil
		cancel()
		switch {
		case err == nil:
			l.wakeups.Notify(n.Payload)
		case ctx.Err() != nil:
			return ctx.Err()
		case timedOut && !conn.IsClosed():
			if err := l.ping(ctx, conn); err != nil {
				return err
			}
		default:
			return fmt.Errorf("wait for notification: %w", err)
		}
	}
}

func (l *listener) ping(ctx context.Context, conn *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, listenConnectTimeout)
	defer cancel()
	if err := conn.Ping(ctx); err != nil {
		return fmt.Errorf("keepalive ping: %w", err)
	}
	l.pings.Add(1)
	return nil
}

// closeQuietly closes a connection that may already be broken.
func closeQuietly(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}
