package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Group commit. Every write transaction goes through the one writer
// connection, and a synced commit waits for its fsync; transactions that
// arrive while one commits would each wait for the writer and then pay
// their own fsync. Instead they queue, and the next transaction carries
// all of them: each runs in a savepoint of its own (its error or panic
// undoes its writes only), one commit (one fsync) makes them durable
// together, and each caller is answered, and its wake-ups sent, only after
// that commit. A transaction that finds the writer idle runs alone at
// once, exactly as without grouping: an idle store adds no wait, and no
// batching window delays anyone.
//
//	caller ─┐ queue ┌─ leader: the first caller to find no leader, or the
//	caller ─┼──────►│  one handed the lead; it runs a batch (itself among
//	caller ─┘       └─ it), answers it, and hands the lead to the next waiter
//
// The lead passes from caller to caller, so no goroutine of its own runs
// and no caller works long for others: it runs one batch, its own
// included.

// maxGroup bounds the transactions one commit carries, so one batch
// holds the writer only so long.
const maxGroup = 64

// writeReq is one caller's transaction waiting for the writer.
type writeReq struct {
	ctx context.Context
	fn  func(w *writeTx) error
	// synced: the commit must be synced (write); false for writeUnsynced.
	// Synced and unsynced ones never share a commit (runBatch).
	synced bool
	// solo: the transaction runs alone, never in a batch: fn uses the
	// *sql.Tx itself with the caller's context (WithTx, Migrate), and a
	// canceled context interrupting one of its statements would roll back
	// every member's writes.
	solo bool
	out  chan groupMsg // one message at a time: the lead, or the outcome
}

// groupMsg is what a waiting caller receives: the lead, or its outcome.
type groupMsg struct {
	lead bool
	err  error
}

// committer is the queue of transactions waiting for the writer.
type committer struct {
	mu      sync.Mutex
	queue   []*writeReq
	leading bool // a caller is running a batch; queue is empty when false
}

// panicked carries a panic of a caller's fn from the leader, which
// recovered it, back to the caller, which panics with it again.
type panicked struct{ value any }

func (p panicked) Error() string { return fmt.Sprintf("panic in a write transaction: %v", p.value) }

// submit runs fn in a write transaction, alone or in a batch, and returns
// once it has committed (and its wake-ups are sent) or failed.
func (s *Driver) submit(ctx context.Context, synced, solo bool, fn func(w *writeTx) error) error {
	r := &writeReq{ctx: ctx, fn: fn, synced: synced, solo: solo, out: make(chan groupMsg, 1)}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, r)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	for {
		if lead {
			s.lead()
		}
		m := <-r.out
		if !m.lead {
			var p panicked
			if errors.As(m.err, &p) {
				panic(p.value)
			}
			return m.err
		}
		lead = true
	}
}

// lead runs the batch at the head of the queue (the leader's own
// transaction is its first) and hands the lead to the next waiter.
func (s *Driver) lead() {
	g := &s.group
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()
	s.runBatch(batch)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.queue) == 0 {
		g.leading = false
		return
	}
	g.queue[0].out <- groupMsg{lead: true}
}

// runBatch answers every request of batch: one whose context ended is
// not run; solo ones run in a transaction of their own; the unsynced ones
// share a commit first, then the synced ones share theirs (a group of one
// runs alone). Unsynced ones (claims) never wait for the synced ones'
// fsync: a worker's next claim waits for its last, and behind each
// enqueue batch's fsync the claims, not the slots, set the pace.
func (s *Driver) runBatch(batch []*writeReq) {
	var unsynced, synced []*writeReq
	for _, r := range batch {
		switch {
		case r.ctx.Err() != nil:
			r.out <- groupMsg{err: fmt.Errorf("begin: %w", r.ctx.Err())}
		case r.solo:
			r.out <- groupMsg{err: s.runOne(r)}
		case r.synced:
			synced = append(synced, r)
		default:
			unsynced = append(unsynced, r)
		}
	}
	s.runGroup(unsynced)
	s.runGroup(synced)
}

// runGroup runs rs (all synced or all unsynced) in one shared commit, or
// alone when it is one.
func (s *Driver) runGroup(rs []*writeReq) {
	switch len(rs) {
	case 0:
	case 1:
		rs[0].out <- groupMsg{err: s.runOne(rs[0])}
	default:
		s.runShared(rs)
	}
}

// runOne runs r in a transaction of its own, under r's context.
func (s *Driver) runOne(r *writeReq) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicked{p}
		}
	}()
	if !r.synced {
		return s.unsynced(r.ctx, r.fn)
	}
	tx, err := s.writer.BeginTx(r.ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", translate(err))
	}
	return s.commit(tx, true, r.fn)
}

// runShared runs rs in one transaction, each in a savepoint, commits once
// and answers each. Their statements run detached from the callers'
// contexts (a context was checked before it ran): SQLite rolls back the
// whole transaction when a statement is interrupted, which would undo the
// other members' writes.
func (s *Driver) runShared(rs []*writeReq) {
	synced := rs[0].synced // runGroup's members are all of one kind
	ctx := context.Background()
	answered := make([]bool, len(rs))
	answer := func(i int, err error) {
		answered[i] = true
		rs[i].out <- groupMsg{err: err}
	}
	err := s.onWriter(ctx, synced, func(conn *sql.Conn) error {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin: %w", translate(err))
		}
		committed := false
		defer func() {
			if !committed {
				_ = tx.Rollback()
			}
		}()
		var done []int
		members := make([]*writeTx, len(rs))
		for i, r := range rs {
			members[i] = s.newWriteTx(tx)
			members[i].detached = true
			err := member(tx, members[i], r.fn)
			var broken brokenTx
			if errors.As(err, &broken) {
				return err
			}
			if err != nil {
				answer(i, err)
				continue
			}
			done = append(done, i)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit: %w", translate(err))
		}
		committed = true
		if s.onCommit != nil {
			s.onCommit(synced)
		}
		for _, i := range done {
			members[i].notify()
			answer(i, nil)
		}
		return nil
	})
	for i := range rs {
		if !answered[i] {
			answer(i, err)
		}
	}
}

// brokenTx is a savepoint statement that failed: the shared transaction's
// state is unknown (SQLite may have rolled it back on its own), so none of
// its members commits.
type brokenTx struct{ err error }

func (b brokenTx) Error() string { return b.err.Error() }
func (b brokenTx) Unwrap() error { return b.err }

// member runs fn in a savepoint of tx: on an error or a panic (returned
// as panicked) its writes are undone and the transaction goes on.
func member(tx *sql.Tx, w *writeTx, fn func(w *writeTx) error) (err error) {
	ctx := context.Background()
	if _, err := tx.ExecContext(ctx, "SAVEPOINT grp"); err != nil {
		return brokenTx{fmt.Errorf("savepoint: %w", translate(err))}
	}
	released := false
	defer func() {
		if p := recover(); p != nil {
			err = panicked{p}
		}
		if released {
			return
		}
		_, rerr := tx.ExecContext(ctx, "ROLLBACK TO grp")
		if rerr == nil {
			_, rerr = tx.ExecContext(ctx, "RELEASE grp")
		}
		if rerr != nil {
			err = brokenTx{fmt.Errorf("%w; undoing it: %w", err, translate(rerr))}
		}
	}()
	if err := fn(w); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "RELEASE grp"); err != nil {
		return brokenTx{fmt.Errorf("release savepoint: %w", translate(err))}
	}
	released = true
	return nil
}
