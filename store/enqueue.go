package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

// coalesceTries bounds the fold-or-insert loop of a coalesced enqueue.
// Each turn that fails to do either lost a race to a claim or to another
// enqueue that both committed, so a handful of turns is plenty.
const coalesceTries = 8

// Enqueue inserts job and job_queue in one transaction and wakes the
// workers serving the job's tag (invariant 1). With a CoalesceKey it keeps
// one waiting job per (workspace, app, action, key) holding the key: the
// latest input wins and the generation is bumped (invariant 10), as long
// as the holder is pinned as p is; otherwise p is a new job that takes
// the key over.
//
// A job without a coalesce key is one operation on the pool (on Postgres
// one statement, insert and notify: one round trip).
func (s *Store) Enqueue(ctx context.Context, p spine.EnqueueParams) (spine.EnqueueResult, error) {
	res, err := s.enqueueTx(ctx, s.ex, p)
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue job: %w", err)
	}
	return res, nil
}

// EnqueueTx is Enqueue inside the caller's transaction ex (from
// postgres.Driver.TxExecutor or sqlite.Driver.WithTx): the job exists, and
// its tag's workers are woken, only if that transaction commits. On
// Postgres the transaction must be at READ COMMITTED (the default) for
// coalescing to retry correctly.
func (s *Store) EnqueueTx(ctx context.Context, ex driver.Executor, p spine.EnqueueParams) (spine.EnqueueResult, error) {
	res, err := s.enqueueTx(ctx, ex, p)
	if err != nil {
		return spine.EnqueueResult{}, fmt.Errorf("enqueue job in transaction: %w", err)
	}
	return res, nil
}

// enqueueTx checks and fills p (spine.PrepareEnqueue), checks that the
// secrets its env names exist, and enqueues it on ex, waking its tag. A zero Now stays zero: the driver reads the
// database's clock.
func (s *Store) enqueueTx(ctx context.Context, ex driver.Executor, p spine.EnqueueParams) (spine.EnqueueResult, error) {
	p, err := spine.PrepareEnqueue(p, time.Time{})
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	if err := checkSecretsExist(ctx, ex, p); err != nil {
		return spine.EnqueueResult{}, err
	}
	return enqueue(ctx, ex, p, true)
}

// enqueue enqueues one prepared job on ex. Without a coalesce key it is
// one insert. With one it first folds the request into the waiting job
// holding the key with the same pin; when there is none it inserts, and
// when the insert meets a job that appeared meanwhile (another enqueue
// committed it), it tries the fold again (invariant 10). A holder pinned
// otherwise (the catalog moved: other commit, schemas, tag or settings)
// is never folded into, since its code was never validated for this
// input: it gives the key up, keeps its pin and runs, and the request
// becomes a new job beside it that holds the key. notify wakes the tag; a batch wakes
// each tag once at its end instead.
func enqueue(ctx context.Context, ex driver.Executor, p spine.EnqueueParams, notify bool) (spine.EnqueueResult, error) {
	if p.CoalesceKey == "" {
		res, _, err := ex.EnqueueInsert(ctx, p, notify)
		return res, err
	}
	for range coalesceTries {
		res, ok, err := ex.EnqueueCoalesce(ctx, p, notify)
		if err != nil || ok {
			return res, err
		}
		res, ok, err = ex.EnqueueInsert(ctx, p, notify)
		if err != nil || ok {
			return res, err
		}
		// The key's holder is pinned to what the catalog resolved before
		// (a redeploy since): it keeps its pin and runs, and the next turn
		// inserts this request beside it as the key's new holder.
		if _, err := ex.EnqueueCoalesceRelease(ctx, p); err != nil {
			return spine.EnqueueResult{}, fmt.Errorf("release coalesce key %q: %w", p.CoalesceKey, err)
		}
	}
	return spine.EnqueueResult{}, fmt.Errorf("%w: coalesce key %q kept changing hands; try again",
		spine.ErrConflict, p.CoalesceKey)
}

// Sync makes every enqueue that returned before it durable, the unsynced
// ones too (spine.EnqueueParams.Unsynced).
func (s *Store) Sync(ctx context.Context) error {
	if err := s.ex.Sync(ctx); err != nil {
		return fmt.Errorf("sync enqueues: %w", err)
	}
	return nil
}

// EnqueueBatch enqueues many jobs in one transaction with one wake-up per
// tag; either all are enqueued or none. Every request is checked before
// anything is written. The coalesced jobs go one by one (each may need the
// fold-or-insert loop), then all the others in one operation (on Postgres
// one statement and the wake-ups: one round trip).
func (s *Store) EnqueueBatch(ctx context.Context, ps []spine.EnqueueParams) ([]spine.EnqueueResult, error) {
	prepared := make([]spine.EnqueueParams, len(ps))
	for i, p := range ps {
		var err error
		if prepared[i], err = spine.PrepareEnqueue(p, time.Time{}); err != nil {
			return nil, fmt.Errorf("enqueue batch: job %d: %w", i, err)
		}
	}
	if len(prepared) == 0 {
		return nil, nil
	}
	var results []spine.EnqueueResult
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		for i, p := range prepared {
			if err := checkSecretsExist(ctx, ex, p); err != nil {
				return fmt.Errorf("job %d: %w", i, err)
			}
		}
		var err error
		results, err = enqueueAll(ctx, ex, prepared)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("enqueue batch: %w", err)
	}
	return results, nil
}

// enqueueAll enqueues prepared jobs on ex and wakes each distinct tag once.
func enqueueAll(ctx context.Context, ex driver.Executor, ps []spine.EnqueueParams) ([]spine.EnqueueResult, error) {
	results := make([]spine.EnqueueResult, len(ps))
	plain := make([]spine.EnqueueParams, 0, len(ps))
	var tags []string
	seen := map[string]bool{}
	for i, p := range ps {
		if !seen[p.Pin.Tag] {
			seen[p.Pin.Tag] = true
			tags = append(tags, p.Pin.Tag)
		}
		if p.CoalesceKey != "" {
			r, err := enqueue(ctx, ex, p, false)
			if err != nil {
				return nil, fmt.Errorf("job %d: %w", i, err)
			}
			results[i] = r
			continue
		}
		plain = append(plain, p)
		results[i] = spine.EnqueueResult{ID: p.ID, Generation: 1}
	}
	if err := ex.EnqueueInsertBatch(ctx, plain, tags); err != nil {
		return nil, fmt.Errorf("insert %d jobs: %w", len(plain), err)
	}
	return results, nil
}

// EnqueueAction is the one enqueue path (DESIGN §2 invariant 1): it
// resolves (workspace, app, action), validates the input against the
// action's input schema (*catalog.InputError), pins the app's and
// action's values into the job (catalog.Resolve) and inserts it as
// EnqueueTx does. Unknown app or action: catalog.ErrNotFound. Either
// error writes no row.
//
// Without a coalesce key it needs no transaction of its own: the pin is
// resolved from the catalog rows the last enqueue of the action read
// (enqueuePinned), or from one read of them, and the job is one insert,
// its own transaction, made only while the app is still at the pin's
// commit. On Postgres that is one round trip instead of four (a read,
// BEGIN and COMMIT), which the warm ?wait path feels
// (docs/BENCHMARKS.md). A coalesced request folds,
// releases and inserts in one transaction, so a release is never left
// without its insert.
func (s *Store) EnqueueAction(ctx context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	if r.CoalesceKey == "" {
		return s.enqueuePinned(ctx, r)
	}
	var res spine.EnqueueResult
	err := s.ex.Tx(ctx, func(ex driver.Executor) error {
		var err error
		res, err = s.enqueueAction(ctx, ex, r)
		return err
	})
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return res, nil
}

// EnqueueActionTx is EnqueueAction inside the caller's transaction ex
// (from postgres.Driver.TxExecutor or sqlite.Driver.WithTx): the job
// exists only if that transaction commits. It reads the catalog through
// ex, so the pin is what the transaction sees.
func (s *Store) EnqueueActionTx(ctx context.Context, ex driver.Executor, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	return s.enqueueAction(ctx, ex, r)
}

// enqueuePinned is enqueueAction outside a transaction, without a coalesce
// key: from the catalog rows an earlier enqueue of the action read
// (pinCache), inserted only while its app is still at their commit; the
// rows are read (and kept) when there are none, when they are stale, or
// when their schema refused the input (the catalog's may not).
func (s *Store) enqueuePinned(ctx context.Context, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	if err := requireAction(r); err != nil {
		return spine.EnqueueResult{}, err
	}
	if app, action, ok := s.pins.get(r); ok {
		p, err := catalog.Resolve(r, app, action)
		if err == nil {
			p.AtCommit = true
			res, err := s.EnqueueTx(ctx, s.ex, p)
			if !errors.Is(err, spine.ErrStalePin) {
				return res, err
			}
		}
		s.pins.drop(r)
	}
	read := time.Now()
	app, action, err := s.ex.ResolveAction(ctx, r.Workspace, r.App, r.Action)
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	s.pins.put(r, app, action, read)
	return s.enqueueResolved(ctx, s.ex, r, app, action)
}

// requireAction refuses a request that names no workspace, app or action.
func requireAction(r catalog.EnqueueRequest) error {
	if r.Workspace == "" || r.App == "" || r.Action == "" {
		return fmt.Errorf("enqueue: %w: workspace, app and action are required", spine.ErrInvalid)
	}
	return nil
}

// enqueueAction is the one enqueue path inside ex's transaction: resolve,
// validate, pin, insert and wake up. Schedules, webhooks and requeues call
// it so their own writes and the job commit together.
func (s *Store) enqueueAction(ctx context.Context, ex driver.Executor, r catalog.EnqueueRequest) (spine.EnqueueResult, error) {
	if err := requireAction(r); err != nil {
		return spine.EnqueueResult{}, err
	}
	app, action, err := ex.ResolveAction(ctx, r.Workspace, r.App, r.Action)
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return s.enqueueResolved(ctx, ex, r, app, action)
}

// enqueueResolved validates r against the app and action read for it,
// pins them (catalog.Resolve) and inserts the job on ex.
func (s *Store) enqueueResolved(ctx context.Context, ex driver.Executor, r catalog.EnqueueRequest,
	app catalog.App, action catalog.Action) (spine.EnqueueResult, error) {
	p, err := catalog.Resolve(r, app, action)
	if err != nil {
		return spine.EnqueueResult{}, err
	}
	return s.EnqueueTx(ctx, ex, p)
}
