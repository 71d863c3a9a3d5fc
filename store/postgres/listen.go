package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
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
func (s *Driver) Subscribe(tags []string) (<-chan struct{}, func()) {
	ch, unsubscribe := s.wakeups.Subscribe(tags)
	s.awaitListener()
	return ch, unsubscribe
}

// SubscribeCompletion returns a channel that receives a value soon after
// job id becomes terminal, whichever process finished it: every
// transaction that writes job_completed NOTIFYs the job's id on the done
// channel (see spine.Store). Like Subscribe, the first call starts the
// listener and waits until it listens, so a completion committed after
// SubscribeCompletion returns is not missed; a listener that lost its
// connection wakes every waiter once it is back.
func (s *Driver) SubscribeCompletion(id uuid.UUID) (<-chan spine.Finished, func()) {
	ch, unsubscribe := s.completions.Subscribe(id)
	s.awaitListener()
	return ch, unsubscribe
}

// SubscribeDispatch gives worker the inbox of the jobs enqueues dispatch
// to it (spine/dispatch.go). Like Subscribe, the first call starts the
// listener and waits until it listens.
func (s *Driver) SubscribeDispatch(worker string) (*spine.Inbox, func()) {
	in, unsubscribe := s.dispatches.Subscribe(worker)
	s.awaitListener()
	return in, unsubscribe
}

// dispatching reports whether the listener hears dispatches now: only
// then does a claim leave an offer (claim.go). A dispatch sent while the
// listener is away would reach no worker.
func (s *Driver) dispatching() bool {
	s.mu.Lock()
	l := s.listener
	s.mu.Unlock()
	return l != nil && l.listening.Load()
}

// awaitListener starts the listener and waits (a few seconds at most) for
// its first LISTEN. Once it has listened this returns at once, also while
// it reconnects: its reconnect wakes every subscriber.
func (s *Driver) awaitListener() {
	l := s.startListener()
	if l == nil {
		return
	}
	select {
	case <-l.ready:
		return
	default:
	}
	t := time.NewTimer(min(s.timeout, subscribeWait))
	defer t.Stop()
	select {
	case <-l.ready:
	case <-l.done:
	case <-t.C:
	}
}

// listenerConfig is the pool's connection configuration with the
// listener's own application_name, "<the pool's, or windforce> listener
// <schema>": an operator (or a test) looking at pg_stat_activity tells the
// listener of each store from its claims, and a failover drill can cut it
// alone.
func listenerConfig(pool *pgx.ConnConfig, schema string) *pgx.ConnConfig {
	cfg := pool.Copy()
	name := cfg.RuntimeParams["application_name"]
	if name == "" {
		name = "windforce"
	}
	name = strings.TrimSpace(name + " listener " + schema)
	if len(name) > 63 { // Postgres keeps NAMEDATALEN-1 bytes
		name = name[:63]
	}
	cfg.RuntimeParams["application_name"] = name
	return cfg
}

// startListener starts the listener once; nil after Close.
func (s *Driver) startListener() *listener {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	if s.listener == nil {
		s.listener = newListener(s.listenCfg, s, s.log, s.keepalive)
	}
	return s.listener
}

// listener holds one dedicated connection (outside the pool, so claims
// never wait behind it) that LISTENs on the store's three channels: it feeds
// each enqueue notification's tag to the Wakeups and each completion
// notification's job ids to the Completions, and each dispatch to the
// Dispatches. It reconnects with backoff when the connection is lost, and
// then wakes every subscriber and marks every inbox missed: notifications
// sent while it was away are lost, so workers and waiters must look for
// themselves.
type listener struct {
	cfg             *pgx.ConnConfig
	channel         string
	doneChannel     string
	dispatchChannel string
	wakeups         *spine.Wakeups
	completions     *spine.Completions
	dispatches      *spine.Dispatches
	log             *slog.Logger
	keepalive       time.Duration

	cancel    context.CancelFunc
	done      chan struct{} // closed when run returns
	ready     chan struct{} // closed after the first LISTEN
	readyOnce sync.Once
	listening atomic.Bool   // between a LISTEN and the loss of its connection
	pid       atomic.Uint32 // backend of the current connection, for tests
	pings     atomic.Int64  // keepalive pings sent, for tests
}

func newListener(cfg *pgx.ConnConfig, s *Driver, log *slog.Logger, keepalive time.Duration) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{
		cfg: cfg, channel: s.channel, doneChannel: s.doneChannel, dispatchChannel: s.dispatchChannel,
		wakeups: &s.wakeups, completions: &s.completions, dispatches: &s.dispatches, log: log, keepalive: keepalive,
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
			l.listening.Store(true)
			l.readyOnce.Do(func() { close(l.ready) })
			if attempt > 0 {
				// Subscribers were not covered while we were away.
				l.log.Info("job wake-up listener reconnected", "channel", l.channel)
				l.wakeups.NotifyAll()
				l.completions.NotifyAll()
				l.dispatches.MissedAll()
			}
			delay = listenMinBackoff
			err = l.receive(ctx, conn)
			l.listening.Store(false)
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

// listen opens the dedicated connection and LISTENs on its three channels
// (one round trip: without arguments Exec sends the statements at once).
func (l *listener) listen(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, listenConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	stmt := "LISTEN " + pgx.Identifier{l.channel}.Sanitize() + "; LISTEN " + pgx.Identifier{l.doneChannel}.Sanitize() +
		"; LISTEN " + pgx.Identifier{l.dispatchChannel}.Sanitize()
	if _, err := conn.Exec(ctx, stmt); err != nil {
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
		case err == nil && n.Channel == l.doneChannel:
			l.completions.NotifyFinished(parseDone(n.Payload)...)
		case err == nil && n.Channel == l.dispatchChannel:
			l.deliver(n.Payload)
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

// deliver routes one dispatch notification (enqueue.sql) to its worker's
// inbox, if that worker is in this process: its first line is the lease
// and the worker ("job_id claim_token worker"), the second, when the job
// fitted, the job itself (notifiedJob), decoded only for a worker here.
func (l *listener) deliver(payload string) {
	head, body, _ := strings.Cut(payload, "\n")
	id, rest, _ := strings.Cut(head, " ")
	token, worker, _ := strings.Cut(rest, " ")
	jobID, err1 := uuid.Parse(id)
	claimToken, err2 := uuid.Parse(token)
	if err1 != nil || err2 != nil || worker == "" {
		l.log.Warn("malformed dispatch notification", "payload", head)
		return
	}
	if !l.dispatches.Here(worker) {
		return
	}
	d := spine.Dispatch{Lease: spine.Lease{JobID: jobID, ClaimToken: claimToken}}
	if body != "" {
		job, err := decodeNotifiedJob(d.Lease, body)
		if err != nil {
			l.log.Warn("undecodable job in a dispatch notification; the worker reads it", "job", jobID, "err", err)
		} else {
			d.Job = &job
		}
	}
	l.dispatches.Deliver(worker, d)
}
