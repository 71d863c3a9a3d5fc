package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/store/driver"
)

// A sync's outcome is a source event when it changed what the source
// shows (DESIGN §9). Both are decided from the source as the sync's
// transaction found it, under the lock that serializes one source's
// syncs (CatalogApplyLock), so two syncs cannot both decide "changed".

// syncedChanges reports whether recording commit as the source's commit
// changes what before showed: a new commit, or the same one after a
// failure (the error clears). Re-applying the commit the source already
// held without an error (its tree was missing from the object cache)
// writes no source.synced: nothing a receiver acts on changed.
func syncedChanges(before catalog.Source, commit string) bool {
	return before.Commit != commit || before.Error != ""
}

// failedChanges reports whether recording message as the source's error
// changes what before showed. The poll retries a broken source every
// interval and fails the same way each time: only the first of those
// failures (and each different one) writes a source.sync_failed.
func failedChanges(before catalog.Source, message string) bool {
	return before.Error != message
}

// sourceEvent writes typ's event of the source workspace/id in the
// transaction of ex, with the source as that transaction's change left
// it: its API view (source.ViewOf, what GET /api/w/{ws}/sources shows) as
// data, the time it stored for the change (synced_at, error_at) as the
// event time. The driver writes nothing while the workspace has no sink.
// The caller holds the source's row lock (lockedSource) when the event
// draws its seq, so one source's events are in seq order as their syncs
// committed, the order the relay keeps per source and sink.
func sourceEvent(ctx context.Context, ex driver.Executor, typ events.Type, workspace, id string) error {
	src, err := ex.CatalogGetSource(ctx, workspace, id)
	if err != nil {
		return fmt.Errorf("read the source for its %s event: %w", typ, err)
	}
	data, err := json.Marshal(source.ViewOf(src))
	if err != nil {
		return fmt.Errorf("encode the source for its %s event: %w", typ, err)
	}
	at := src.SyncedAt
	if typ == events.SourceSyncFailed {
		at = src.ErrorAt
	}
	var when time.Time
	if at != nil {
		when = *at
	}
	if err := ex.SourceEvent(ctx, driver.SourceEvent{Type: typ, Workspace: workspace, SourceID: id, Time: when, Data: data}); err != nil {
		return fmt.Errorf("write %s event: %w", typ, err)
	}
	return nil
}
