package runner

import (
	"context"
	"time"

	"github.com/windforce/windforce/catalog"
)

// CatalogReader is where the warm pool reads which commit each app of a
// workspace is at now (catalog.Store's AppCommits; *store.Store has it).
type CatalogReader interface {
	AppCommits(ctx context.Context, workspace string) ([]catalog.AppCommit, error)
}

// DefaultCatalogInterval is how often the warm pool compares its
// processes with the catalog (Config.CatalogInterval).
const DefaultCatalogInterval = 5 * time.Second

// A commit no longer in the catalog drains its processes (DESIGN §7): the
// source synced a newer commit, the app left the manifest, or the source
// was deleted (its apps go with it). A worker may run on another machine
// and knows the catalog only through the store it already holds, so the
// pool asks it: every CatalogInterval, and only while it holds processes,
// one read per workspace it holds processes of (AppCommits: key, source,
// commit of each app, the primary key's prefix). A notification would be
// quicker, but none reaches every worker: a sync wakes no worker, SQLite
// has no NOTIFY across processes, and source.synced events are written
// only for a workspace with an event sink and delivered to its receivers,
// not to workers. A read every few seconds per worker costs the database
// little and works the same on both.
//
//	every interval: snapshot the pool's processes ─▶ AppCommits per workspace
//	  app missing, or at another source or commit ─▶ the commit is gone:
//	  its idle processes are retired now, its busy ones after their job
//
// A job still queued pinned to a gone commit runs on its own code, warm
// as its pin says: in a fresh process of that commit (the commit copy is
// still in the worker's cache, or fetched again), retired after the job.
// Running it cold instead would change what the job sees (a fresh process
// per job is warm's own behaviour anyway after max_jobs), and the queued
// tail of an old commit is short.

// commitRef is one commit of one app.
type commitRef struct{ workspace, app, source, commit string }

func (k warmKey) ref() commitRef { return commitRef{k.workspace, k.app, k.source, k.commit} }

// drainGone reads the catalog for the workspaces the pool holds processes
// of and retires the idle processes of commits no longer there; the busy
// ones are retired after their job (stale). Only processes that existed
// before the read are judged: a process started since may serve a commit
// synced after the read.
func (pl *warmPool) drainGone(ctx context.Context, timeout time.Duration) {
	judged := pl.snapshot()
	if len(judged) == 0 {
		pl.mu.Lock()
		pl.gone = nil
		pl.mu.Unlock()
		return
	}
	current := pl.readCatalog(ctx, judged, timeout)
	pl.mu.Lock()
	defer pl.mu.Unlock()
	gone := map[commitRef]bool{}
	for ref := range pl.gone {
		if _, read := current[ref.workspace]; !read {
			gone[ref] = true // not read this time: still gone as far as we know
		}
	}
	for wp, key := range judged {
		apps, read := current[key.workspace]
		if !read || !pl.procs[wp] {
			continue
		}
		if a, ok := apps[key.app]; !ok || a.SourceID != key.source || a.CommitSHA != key.commit {
			if !gone[key.ref()] && !pl.gone[key.ref()] {
				pl.r.log.Info("warm pool: draining the processes of a commit no longer in the catalog",
					"workspace", key.workspace, "app", key.app, "source", key.source, "commit", key.commit)
			}
			gone[key.ref()] = true
		}
	}
	pl.gone = gone
	for key, list := range pl.idle {
		if gone[key.ref()] {
			delete(pl.idle, key)
			for _, wp := range list {
				pl.retireLocked(wp)
			}
		}
	}
}

// snapshot is the pool's processes now, with their keys.
func (pl *warmPool) snapshot() map[*warmProc]warmKey {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	procs := make(map[*warmProc]warmKey, len(pl.procs))
	for wp := range pl.procs {
		procs[wp] = wp.key
	}
	return procs
}

// readCatalog reads the apps of every workspace of procs, by workspace
// and app key; a workspace whose read failed is missing (logged once per
// streak of failures).
func (pl *warmPool) readCatalog(ctx context.Context, procs map[*warmProc]warmKey, timeout time.Duration) map[string]map[string]catalog.AppCommit {
	current := map[string]map[string]catalog.AppCommit{}
	for _, key := range procs {
		if _, done := current[key.workspace]; done {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, timeout)
		apps, err := pl.r.cfg.Catalog.AppCommits(rctx, key.workspace)
		cancel()
		if err != nil {
			if !pl.catalogDown && ctx.Err() == nil {
				pl.r.log.Warn("warm pool: cannot read the catalog's commits; processes of old commits stay until it can", "workspace", key.workspace, "err", err)
			}
			pl.catalogDown = true
			current[key.workspace] = nil // tried: not again this round
			continue
		}
		pl.catalogDown = false
		m := make(map[string]catalog.AppCommit, len(apps))
		for _, a := range apps {
			m[a.AppKey] = a
		}
		current[key.workspace] = m
	}
	for ws, m := range current {
		if m == nil {
			delete(current, ws)
		}
	}
	return current
}
