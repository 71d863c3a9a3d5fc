package source

import (
	"context"
	"log/slog"
	"time"

	"github.com/windforce/windforce/spine"
)

// PassResult is what one poll pass did, per source ("workspace/id").
type PassResult struct {
	Synced map[string]Result
	Failed map[string]error
}

// Poller syncs every source of every workspace each Interval
// (WINDFORCE_SYNC_INTERVAL), as a fallback for missing push hooks. Every
// server may run one: syncs of one source are serialized by the store's
// lock, and an unchanged branch costs one git ls-remote.
type Poller struct {
	Syncer *Syncer
	// Interval between passes; zero or less disables the poller.
	Interval time.Duration
	Logger   *slog.Logger
	// OnPass, when set, is called after each pass (metrics, tests).
	OnPass func(PassResult)

	life spine.Lifecycle
}

// Start runs a pass at once and then every Interval until Stop or ctx
// ends; spine.ErrAlreadyStarted while it runs. With Interval <= 0 it does
// nothing.
func (p *Poller) Start(ctx context.Context) error {
	if p.Interval <= 0 {
		return nil
	}
	return p.life.StartEvery(ctx, p.Interval, p.pass)
}

// Stop ends the poller and waits for a pass in progress. It is idempotent;
// a stopped poller may be started again.
func (p *Poller) Stop() { p.life.Stop() }

// pass syncs each source once; failures are recorded on the source by
// Sync and logged here.
func (p *Poller) pass(ctx context.Context) {
	log := p.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srcs, err := p.Syncer.Catalog.ListSources(ctx, "")
	if err != nil {
		if ctx.Err() == nil {
			log.Error("sync poll: list sources", "err", err)
		}
		return
	}
	res := PassResult{Synced: map[string]Result{}, Failed: map[string]error{}}
	for _, src := range srcs {
		if ctx.Err() != nil {
			return
		}
		key := src.Workspace + "/" + src.ID
		r, err := p.Syncer.Sync(ctx, src.Workspace, src.ID)
		if err != nil {
			res.Failed[key] = err
			continue
		}
		res.Synced[key] = r
	}
	if p.OnPass != nil {
		p.OnPass(res)
	}
}
