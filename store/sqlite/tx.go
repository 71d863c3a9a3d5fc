package sqlite

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// writeTx is one transaction on the writer connection: its statements, the
// tags whose workers it must wake and the jobs whose waiters it must wake
// once it has committed, and the schemas it has pinned.
type writeTx struct {
	s     *Driver
	tx    *sql.Tx
	stmts map[query]*sql.Stmt
	tags  map[string]struct{}
	done  []spine.Finished
	// schemas are the schemas this transaction pinned, by text, so the
	// jobs of a batch store theirs once (pinned_schema.go).
	schemas map[string]pinnedSchema
	// eager sends each wake-up at once: the driver cannot see this
	// transaction's commit (TxExecutor).
	eager bool
	// started is the transaction's clock, read at its first zero Now.
	started time.Time
	// detached: the transaction is shared (group.go), so its statements
	// run without their callers' cancellation.
	detached bool
}

// ctx is the context a statement of w runs under: ctx, without its
// cancellation when w is shared.
func (w *writeTx) ctx(ctx context.Context) context.Context {
	if w.detached {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// now is an operation's Now inside this transaction: t, or for a zero t
// one clock reading for the whole transaction, as Postgres's now() is, so
// the rows one transaction writes carry one time.
func (w *writeTx) now(t time.Time) time.Time {
	if !t.IsZero() {
		return resolveNow(t)
	}
	if w.started.IsZero() {
		w.started = resolveNow(time.Time{})
	}
	return w.started
}

func (s *Driver) newWriteTx(tx *sql.Tx) *writeTx {
	return &writeTx{s: s, tx: tx, stmts: map[query]*sql.Stmt{}, tags: map[string]struct{}{}}
}

// wake queues a wake-up for tag, sent after commit; one per distinct tag.
func (w *writeTx) wake(tag string) {
	w.tags[tag] = struct{}{}
	if w.eager {
		w.notify()
	}
}

// finished queues a completion wake-up for job id, sent after commit: the
// transaction wrote its job_completed row.
func (w *writeTx) finished(id uuid.UUID) {
	w.finishedWith(spine.Finished{ID: id})
}

// finishedWith is finished with what the wake-up carries (a success's
// outcome, spine.Finished).
func (w *writeTx) finishedWith(f spine.Finished) {
	w.done = append(w.done, f)
	if w.eager {
		w.notify()
	}
}

// notify sends the queued wake-ups. Call it only after a successful commit:
// a worker woken earlier would find nothing to claim, and a waiter woken
// earlier would still read the job as live.
func (w *writeTx) notify() {
	for tag := range w.tags {
		w.s.wakeups.Notify(tag)
	}
	clear(w.tags)
	if len(w.done) > 0 {
		w.s.completions.NotifyFinished(w.done...)
		w.done = w.done[:0]
	}
}

// stmt binds q to this transaction: the statement prepared on the writer
// connection when there is one, else a statement prepared for this
// transaction only (before Migrate made the schema current).
func (w *writeTx) stmt(ctx context.Context, q query) (*sql.Stmt, error) {
	ctx = w.ctx(ctx)
	if st, ok := w.stmts[q]; ok {
		return st, nil
	}
	var st *sql.Stmt
	if p := w.s.stmts.Load(); p != nil && p.writer[q] != nil {
		st = w.tx.StmtContext(ctx, p.writer[q])
	} else {
		var err error
		if st, err = w.tx.PrepareContext(ctx, sqlOf(q)); err != nil {
			return nil, fmt.Errorf("prepare %s: %w", q, err)
		}
	}
	w.stmts[q] = st
	return st, nil
}

func (w *writeTx) exec(ctx context.Context, q query, args ...any) (sql.Result, error) {
	ctx = w.ctx(ctx)
	st, err := w.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (w *writeTx) query(ctx context.Context, q query, args ...any) (*sql.Rows, error) {
	ctx = w.ctx(ctx)
	st, err := w.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// queryRow runs a statement expected to return at most one row; its Scan
// reports sql.ErrNoRows for none.
func (w *writeTx) queryRow(ctx context.Context, q query, args ...any) rowScanner {
	ctx = w.ctx(ctx)
	st, err := w.stmt(ctx, q)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// rowScanner is *sql.Row, or errRow when the statement could not be bound.
type rowScanner interface{ Scan(dest ...any) error }

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// write runs fn in one BEGIN IMMEDIATE transaction on the writer and, once
// it has committed, sends the wake-ups fn queued. Any error (or panic) in fn
// rolls back and sends none. The commit is durable when write returns
// (synchronous=FULL). Transactions that arrive together share one commit
// (group.go).
func (s *Driver) write(ctx context.Context, fn func(w *writeTx) error) error {
	return s.submit(ctx, true, false, fn)
}

// writeSolo is write in a transaction of its own, never shared: for fn
// that uses w.tx itself under its caller's context.
func (s *Driver) writeSolo(ctx context.Context, fn func(w *writeTx) error) error {
	return s.submit(ctx, true, true, fn)
}

// writeUnsynced is write whose commit is not synced to disk
// (synchronous=NORMAL for this one transaction): it is durable against a
// crash of the process at once, and against a crash of the machine from
// the next synced commit or checkpoint on, which the WAL's order makes
// cover it. It is for writes that nobody outside this process is told
// about before a later synced commit: a claim is answered only to this
// process's worker, which a machine crash takes down with the claim, and
// the job's outcome (synced) makes the claim durable before anyone learns
// of either; a ?wait's enqueue (spine.EnqueueParams.Unsynced) is named
// to its caller only with its outcome or after Sync. It saves the
// transaction its fsync, the largest part of its cost, and its wait for
// others' fsync: it shares a commit only with other unsynced
// transactions, which run before the synced ones queued with them
// (runBatch).
func (s *Driver) writeUnsynced(ctx context.Context, fn func(w *writeTx) error) error {
	return s.submit(ctx, false, false, fn)
}

// unsynced runs fn in a transaction of its own committed without a sync.
func (s *Driver) unsynced(ctx context.Context, fn func(w *writeTx) error) error {
	return s.onWriter(ctx, false, func(conn *sql.Conn) error {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin: %w", translate(err))
		}
		return s.commit(tx, false, fn)
	})
}

// onWriter runs fn on the writer connection, set to synchronous=NORMAL
// for it unless synced.
func (s *Driver) onWriter(ctx context.Context, synced bool, fn func(conn *sql.Conn) error) error {
	conn, err := s.writer.Conn(ctx)
	if err != nil {
		return fmt.Errorf("writer connection: %w", translate(err))
	}
	defer conn.Close()
	if synced {
		return fn(conn)
	}
	if err := s.pragmas.set(ctx, conn, false); err != nil {
		return fmt.Errorf("unsynced transaction: %w", translate(err))
	}
	// The mode is the connection's: every other transaction must find it
	// FULL again. A connection that cannot be set back is discarded (the
	// pool opens a fresh one, FULL from its DSN).
	defer func() {
		if err := s.pragmas.set(context.WithoutCancel(ctx), conn, true); err != nil {
			s.log.Warn("sqlite: could not restore synchronous=FULL; discarding the writer connection", "err", err)
			_ = conn.Raw(func(dc any) error { s.pragmas.drop(dc); return sqldriver.ErrBadConn })
		}
	}()
	return fn(conn)
}

// commit runs fn in tx and commits it, then sends the wake-ups fn queued;
// an error (or panic) in fn rolls back and sends none. synced says how the
// commit is made, for tests (Driver.onCommit).
func (s *Driver) commit(tx *sql.Tx, synced bool, fn func(w *writeTx) error) (err error) {
	w := s.newWriteTx(tx)
	committed := false
	defer func() {
		if !committed {
			_ = tx.Rollback() // the error that made us roll back is the one to report
		}
	}()
	if err := fn(w); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", translate(err))
	}
	committed = true
	if s.onCommit != nil {
		s.onCommit(synced)
	}
	w.notify()
	return nil
}

// WithTx runs fn in one write transaction (BEGIN IMMEDIATE on the writer
// connection) and commits when fn returns nil; an error or panic rolls back.
// fn gets the transaction twice: tx for the caller's own statements, and ex
// for the store core's methods that join a transaction
// (store.Store.EnqueueTx, EnqueueActionTx). Jobs enqueued through ex wake
// their workers only after the commit succeeds; a rollback sends no
// wake-up.
//
// fn must use only tx and ex: the driver has one writer connection and tx
// holds it, so any other method that writes would wait for it forever.
func (s *Driver) WithTx(ctx context.Context, fn func(tx *sql.Tx, ex driver.Executor) error) error {
	return s.writeSolo(ctx, func(w *writeTx) error { return fn(w.tx, &executor{d: s, w: w}) })
}

// TxExecutor runs the operations inside tx, a transaction the caller began
// on DB() itself. The driver cannot see that transaction commit, so each
// wake-up is sent as soon as an operation queues it, before the job is
// visible: the worker it wakes finds nothing, and its polling picks the
// job up on the next tick. Prefer WithTx, which wakes after the commit.
func (s *Driver) TxExecutor(tx *sql.Tx) driver.Executor {
	w := s.newWriteTx(tx)
	w.eager = true
	return &executor{d: s, w: w}
}

// syncPragmas are the writer connection's two synchronous settings,
// prepared once on it: an unsynced transaction sets NORMAL before it and
// FULL after, and preparing the two statements every time cost more than
// running them. Only the holder of the one writer connection uses them.
type syncPragmas struct {
	conn         any // the driver connection they are prepared on
	normal, full sqldriver.Stmt
}

// set runs PRAGMA synchronous=FULL (full) or NORMAL on conn, the writer,
// preparing both first on a connection they were not prepared on.
func (p *syncPragmas) set(ctx context.Context, conn *sql.Conn, full bool) error {
	return conn.Raw(func(dc any) error {
		if p.conn != dc {
			if err := p.prepare(ctx, dc); err != nil {
				return err
			}
		}
		st := p.normal
		if full {
			st = p.full
		}
		exec, ok := st.(sqldriver.StmtExecContext)
		if !ok {
			return fmt.Errorf("set synchronous: the driver's statement cannot execute with a context")
		}
		_, err := exec.ExecContext(ctx, nil)
		return err
	})
}

// prepare prepares both statements on dc.
func (p *syncPragmas) prepare(ctx context.Context, dc any) error {
	c, ok := dc.(sqldriver.ConnPrepareContext)
	if !ok {
		return fmt.Errorf("set synchronous: the driver's connection cannot prepare with a context")
	}
	normal, err := c.PrepareContext(ctx, "PRAGMA synchronous=NORMAL")
	if err != nil {
		return err
	}
	full, err := c.PrepareContext(ctx, "PRAGMA synchronous=FULL")
	if err != nil {
		_ = normal.Close()
		return err
	}
	// Those of an earlier connection are not closed: the pool closed it
	// (their memory goes with it), and a statement must not outlive its
	// connection's close.
	p.conn, p.normal, p.full = dc, normal, full
	return nil
}

// drop closes the statements if dc, an open connection about to be
// discarded or closed with the store, is the one they were prepared on.
// Prepared on another, they are only forgotten: the pool already closed
// that one (a cancelled transaction discards its connection), and
// finalizing a statement of a closed connection touches freed memory.
func (p *syncPragmas) drop(dc any) {
	if p.conn == dc {
		_ = p.normal.Close()
		_ = p.full.Close()
	}
	p.conn, p.normal, p.full = nil, nil, nil
}

// closePragmas drops the pragma statements on the writer before it closes.
func (s *Driver) closePragmas() {
	conn, err := s.writer.Conn(context.Background())
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.Raw(func(dc any) error { s.pragmas.drop(dc); return nil })
}
