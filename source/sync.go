package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/source/manifest"
)

// Syncer syncs git sources into the object cache and the catalog. It is
// safe for concurrent use: syncs of one source run one after the other
// (an in-process mutex, and the store's lock across servers); syncs of
// different sources run in parallel.
type Syncer struct {
	Catalog catalog.Store
	Cache   objectcache.Cache
	// Git runs git; nil means a zero Git.
	Git    *Git
	Logger *slog.Logger
	// OnSync, when set, is told the outcome of every sync that ran (the
	// /metrics sync counter); it must not block.
	OnSync func(err error)
	// FileSources are the folders (absolute paths) below which file://
	// sources may be: WINDFORCE_FILE_SOURCES of `windforce server`. Empty
	// (the zero value) allows none, so one workspace cannot name another's
	// repository on the server's disk. Checked when a source is added and
	// again before every sync and deploy.
	FileSources []string
	// AnyFileSource allows a file:// source at any path: `windforce dev`,
	// one person's laptop.
	AnyFileSource bool

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// Result is what a sync did.
type Result struct {
	// Commit is the commit the catalog holds for the source now.
	Commit string
	// Apps are the source's apps at Commit (nil when Unchanged).
	Apps []catalog.App
	// Unchanged is true when the branch head was already synced.
	Unchanged bool
	// Ignored is true when a push hook named another branch.
	Ignored bool
}

// AddSource validates and stores a source (or updates its URL and branch,
// and its hook secret when src.HookSecret is not "").
// It does not sync: call Sync.
func (s *Syncer) AddSource(ctx context.Context, src catalog.Source) error {
	if src.Workspace == "" || !validID(src.ID) {
		return &RefusedError{Reason: fmt.Sprintf("add source: workspace is required and id %q must be letters, digits, _ and - (not starting with . or -)", src.ID)}
	}
	if _, _, err := s.CheckRemote(src.URL, src.Branch); err != nil {
		return fmt.Errorf("add source %s: %w", src.ID, err)
	}
	if src.HookSecret != "" {
		if err := CheckHookSecret(src.HookSecret); err != nil {
			return fmt.Errorf("add source %s: %w", src.ID, err)
		}
	}
	return s.Catalog.PutSource(ctx, src)
}

// CheckRemote checks a source's URL and branch the way every sync and
// deploy does (ValidateRemote, then FileSources for a file:// URL) and
// returns the URL to hand git and the Git that may speak only its
// protocol. Errors are *RefusedError.
func (s *Syncer) CheckRemote(raw, branch string) (string, *Git, error) {
	if err := ValidateRemote(raw, branch); err != nil {
		return "", nil, err
	}
	r, err := parseRemote(raw)
	if err != nil {
		return "", nil, err
	}
	use := raw
	if r.kind == kindFile {
		if use, err = s.localRemote(raw, r.path); err != nil {
			return "", nil, err
		}
	}
	return use, s.git().forKind(r.kind), nil
}

func validID(id string) bool {
	return objectcache.Key{Workspace: "w", Source: id, Commit: "c"}.Validate() == nil && !strings.HasPrefix(id, "-")
}

// Sync fetches the head of the source's branch and, in the fixed order
// (fetch, validate, cache with the marker last, catalog), makes it the
// source's commit. On failure the catalog is unchanged, the error is
// recorded on the source, and a *SyncError is returned (an unknown source
// is catalog.ErrNotFound).
func (s *Syncer) Sync(ctx context.Context, workspace, id string) (Result, error) {
	unlock := s.lockLocal(workspace + "/" + id)
	defer unlock()
	release, err := s.Catalog.LockSource(ctx, workspace, id)
	if err != nil {
		return Result{}, fmt.Errorf("sync %s/%s: %w", workspace, id, err)
	}
	defer release()
	src, err := s.Catalog.GetSource(ctx, workspace, id)
	if err != nil {
		return Result{}, fmt.Errorf("sync %s/%s: %w", workspace, id, err)
	}
	res, err := s.sync(ctx, src)
	if s.OnSync != nil {
		s.OnSync(err)
	}
	if err != nil {
		s.record(ctx, src, err)
		return Result{}, err
	}
	if !res.Unchanged {
		s.logger().Info("synced source", "workspace", workspace, "source", id,
			"commit", res.Commit, "apps", manifest.Summary(res.Apps))
	}
	return res, nil
}

// sync runs the steps; the caller holds the source's locks.
func (s *Syncer) sync(ctx context.Context, src catalog.Source) (Result, error) {
	fail := func(step Step, commit string, err error) (Result, error) {
		return Result{}, &SyncError{Workspace: src.Workspace, Source: src.ID, Step: step, Commit: commit, Err: err}
	}
	// Checked again on every sync: a row stored before the rules, or a
	// folder moved since, must not be read.
	remote, g, err := s.CheckRemote(src.URL, src.Branch)
	if err != nil {
		return fail(StepFetch, "", err)
	}
	if res, ok := s.upToDate(ctx, g, remote, src); ok {
		return res, nil
	}
	commit, files, err := g.Fetch(ctx, remote, src.Branch)
	if err != nil {
		return fail(StepFetch, "", err)
	}
	apps, err := manifest.Load(files)
	if err != nil {
		return fail(StepValidate, commit, err)
	}
	key := objectcache.Key{Workspace: src.Workspace, Source: src.ID, Commit: commit}
	if err := s.Cache.Put(ctx, key, files); err != nil {
		return fail(StepCache, commit, err)
	}
	// The catalog may name the commit only once its marker is there.
	if ok, err := s.Cache.Has(ctx, key); err != nil || !ok {
		return fail(StepCache, commit, errors.Join(&objectcache.IncompleteError{Key: key, Partial: true}, err))
	}
	if err := s.Catalog.ApplySync(ctx, catalog.SyncParams{
		Workspace: src.Workspace, SourceID: src.ID, Commit: commit, Apps: apps,
	}); err != nil {
		return fail(StepCatalog, commit, err)
	}
	return Result{Commit: commit, Apps: apps}, nil
}

// upToDate asks the remote for its head without fetching: when the catalog
// already holds it (and the last sync did not fail) there is nothing to do.
// Any doubt means "sync".
func (s *Syncer) upToDate(ctx context.Context, g *Git, remote string, src catalog.Source) (Result, bool) {
	if src.Commit == "" || src.Error != "" {
		return Result{}, false
	}
	head, err := g.RemoteHead(ctx, remote, src.Branch)
	if err != nil || head != src.Commit {
		return Result{}, false
	}
	ok, err := s.Cache.Has(ctx, objectcache.Key{Workspace: src.Workspace, Source: src.ID, Commit: head})
	if err != nil || !ok {
		return Result{}, false
	}
	return Result{Commit: head, Unchanged: true}, true
}

// record stores a failed sync's reason on the source, even when ctx was
// canceled (the reason is what the user needs to see).
func (s *Syncer) record(ctx context.Context, src catalog.Source, err error) {
	msg := err.Error()
	var se *SyncError
	if errors.As(err, &se) {
		msg = se.Message()
	}
	msg = RedactText(msg) // shown to every reader of the source
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if rerr := s.Catalog.RecordSyncError(ctx, src.Workspace, src.ID, msg); rerr != nil {
		s.logger().Error("record sync error", "workspace", src.Workspace, "source", src.ID, "err", rerr)
	}
	s.logger().Warn("sync failed", "workspace", src.Workspace, "source", src.ID, "err", msg)
}

// Hook handles a push notification: ref is the pushed ref
// ("refs/heads/main" or "main"); "" means unknown and syncs. A push to
// another branch is ignored.
func (s *Syncer) Hook(ctx context.Context, workspace, id, ref string) (Result, error) {
	if ref != "" {
		src, err := s.Catalog.GetSource(ctx, workspace, id)
		if err != nil {
			return Result{}, fmt.Errorf("push hook %s/%s: %w", workspace, id, err)
		}
		if strings.TrimPrefix(ref, "refs/heads/") != src.Branch {
			return Result{Commit: src.Commit, Ignored: true}, nil
		}
	}
	return s.Sync(ctx, workspace, id)
}

// lockLocal takes the in-process lock of one source.
func (s *Syncer) lockLocal(key string) func() {
	s.mu.Lock()
	if s.locks == nil {
		s.locks = map[string]*sync.Mutex{}
	}
	m, ok := s.locks[key]
	if !ok {
		m = &sync.Mutex{}
		s.locks[key] = m
	}
	s.mu.Unlock()
	m.Lock()
	return m.Unlock
}

func (s *Syncer) git() *Git {
	if s.Git == nil {
		return &Git{}
	}
	return s.Git
}

func (s *Syncer) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}
