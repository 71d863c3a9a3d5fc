package source_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/source"
)

// serverSyncer is e's Syncer configured like `windforce server` with
// WINDFORCE_FILE_SOURCES=dirs (none: the default).
func (e *env) serverSyncer(dirs ...string) *source.Syncer {
	return &source.Syncer{Catalog: e.db, Cache: e.cache, FileSources: dirs}
}

// refs lists a repository's refs and what they point at.
func refs(t *testing.T, bare string) string {
	t.Helper()
	return gittest.Git(t, bare, "for-each-ref", "--format=%(refname) %(objectname)")
}

// TestFileSourcesOffByDefault: a server without WINDFORCE_FILE_SOURCES
// refuses every file:// source and stores nothing; the message names the
// setting.
func TestFileSourcesOffByDefault(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r := gittest.New(t)
		err := e.serverSyncer().AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "main", URL: r.URL, Branch: "main"})
		if !errors.Is(err, source.ErrFileSourceNotAllowed) || !strings.Contains(err.Error(), "WINDFORCE_FILE_SOURCES") {
			t.Fatalf("add file source on a default server: %v; want refused naming WINDFORCE_FILE_SOURCES", err)
		}
		if _, err := e.db.GetSource(t.Context(), ws, "main"); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("refused source stored: %v", err)
		}
	})
}

// TestFileSourceBelowAllowedFolder: a repository below a listed folder is
// added, synced and deployed to; a listed folder given through a
// symbolic link works the same.
func TestFileSourceBelowAllowedFolder(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r := gittest.New(t)
		r.CopyDir(t, gittest.Example("hello"))
		commit := r.CommitPush(t, "A")
		link := filepath.Join(t.TempDir(), "git")
		if err := os.Symlink(filepath.Dir(r.Bare), link); err != nil {
			t.Fatal(err)
		}
		e.syncer = e.serverSyncer("/nonexistent", link)
		if err := e.syncer.AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "main", URL: "file://" + filepath.Join(link, "remote.git"), Branch: "main"}); err != nil {
			t.Fatalf("add a source below the allowed folder: %v", err)
		}
		if res := e.sync(t); res.Commit != commit {
			t.Fatalf("sync = %+v, want %s", res, commit)
		}
		res, err := e.syncer.Deploy(t.Context(), ws, "main", source.DeployRequest{Files: map[string][]byte{"notes.txt": []byte("hi")}})
		if err != nil || res.Commit == commit {
			t.Fatalf("deploy below the allowed folder = %+v, %v", res, err)
		}
	})
}

// TestFileSourceEscapes: paths that leave the allowed folder once ..
// and symbolic links are resolved, a sibling folder sharing its prefix,
// and a .git that points elsewhere are all refused at add time.
func TestFileSourceEscapes(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	allowed := filepath.Join(root, "git")
	other := gittest.New(t) // another workspace's repository
	mkdir := func(p string) {
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	symlink := func(target, p string) {
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	mkdir(allowed)
	gittest.Git(t, root, "init", "-q", "--bare", filepath.Join(root, "git-evil", "r.git"))
	symlink(other.Bare, filepath.Join(allowed, "link.git"))
	mkdir(filepath.Join(allowed, "work"))
	symlink(other.Bare, filepath.Join(allowed, "work", ".git"))
	mkdir(filepath.Join(allowed, "gitfile"))
	if err := os.WriteFile(filepath.Join(allowed, "gitfile", ".git"), []byte("gitdir: "+other.Bare+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mkdir(filepath.Join(allowed, "plain"))
	symlink(other.Bare, filepath.Join(allowed, "plain.git")) // git tries plain.git when plain is no repository
	up, err := filepath.Rel(allowed, other.Bare)
	if err != nil || !strings.HasPrefix(up, "../") {
		t.Fatalf("rel = %q, %v", up, err)
	}
	s := &source.Syncer{FileSources: []string{allowed}}
	for _, p := range []string{
		other.Bare,
		allowed + "/" + up,
		filepath.Join(root, "git-evil", "r.git"),
		filepath.Join(allowed, "link.git"),
		filepath.Join(allowed, "work"),
		filepath.Join(allowed, "gitfile"),
		filepath.Join(allowed, "plain"),
		filepath.Join(allowed, "missing.git"),
		"/",
	} {
		_, _, err := s.CheckRemote("file://"+p, "main")
		if !errors.Is(err, source.ErrFileSourceNotAllowed) {
			t.Errorf("file://%s: %v; want ErrFileSourceNotAllowed", p, err)
		}
	}
	gittest.Git(t, root, "init", "-q", "--bare", filepath.Join(allowed, "ok%41.git"))
	got, _, err := s.CheckRemote("file://"+allowed+"/work/../ok%2541.git", "main")
	real, _ := filepath.EvalSymlinks(allowed)
	if want := "file://" + real + "/ok%2541.git"; err != nil || got != want {
		t.Errorf("a repository below the allowed folder: %q, %v; want %q", got, err, want)
	}
	if err := source.CheckFileSources([]string{"/srv/git", "relative/dir"}); err == nil {
		t.Error("CheckFileSources accepted a relative folder")
	}
	if err := source.CheckFileSources([]string{"/srv/git", "/nonexistent"}); err != nil {
		t.Errorf("CheckFileSources: %v", err)
	}
	if got := source.SplitFileSources(" /srv/a:/srv/b,, /srv/c "); strings.Join(got, "|") != "/srv/a|/srv/b|/srv/c" {
		t.Errorf("SplitFileSources = %q", got)
	}
}

// TestStoredFileSourceRefused: a source stored before the rule (or whose
// folder was dropped from the list since) naming another workspace's
// repository is neither synced nor deployed to: the repository's refs
// stay as they were and the catalog keeps its commit.
func TestStoredFileSourceRefused(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		r, a := e.helloSource(t) // added and synced while any path was allowed
		e.sync(t)
		r.Write(t, map[string]string{"README.md": "B\n"})
		r.CommitPush(t, "B")
		before := refs(t, r.Bare)

		e.syncer = e.serverSyncer(t.TempDir())
		_, err := e.syncer.Sync(t.Context(), ws, "main")
		var se *source.SyncError
		if !errors.As(err, &se) || se.Step != source.StepFetch || !se.UserError() || !errors.Is(err, source.ErrFileSourceNotAllowed) {
			t.Fatalf("sync of a stored out-of-bounds file source: %v; want a refused fetch", err)
		}
		e.requireCatalogAt(t, a)
		if src := e.source(t); !strings.Contains(src.Error, "WINDFORCE_FILE_SOURCES") {
			t.Fatalf("source error %q does not name WINDFORCE_FILE_SOURCES", src.Error)
		}
		_, err = e.syncer.Deploy(t.Context(), ws, "main", source.DeployRequest{Files: map[string][]byte{"pwned.txt": []byte("x")}})
		if !errors.Is(err, source.ErrFileSourceNotAllowed) {
			t.Fatalf("deploy to a stored out-of-bounds file source: %v; want refused", err)
		}
		if after := refs(t, r.Bare); after != before {
			t.Fatalf("refused deploy changed the repository's refs:\n%s\nwant\n%s", after, before)
		}
		e.requireCatalogAt(t, a)
	})
}

// TestSyncErrorRedacted: git echoes the remote in its errors, including a
// query the server's own git configuration rewrote in (insteadOf); the
// error stored on the source, returned and logged holds no secret. A row
// stored with a token in its URL before such URLs were refused is
// refused with the URL redacted.
func TestSyncErrorRedacted(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		e.syncer.Git = &source.Git{Env: []string{"GIT_CONFIG_COUNT=1",
			"GIT_CONFIG_KEY_0=url.https://127.0.0.1:1/x?access_token=secret1&/.insteadOf", "GIT_CONFIG_VALUE_0=https://127.0.0.1:1/"}}
		if err := e.syncer.AddSource(t.Context(), catalog.Source{Workspace: ws, ID: "main", URL: "https://127.0.0.1:1/r.git", Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		_, err := e.syncer.Sync(t.Context(), ws, "main")
		if err == nil || strings.Contains(err.Error(), "secret1") {
			t.Fatalf("sync error %v: want a failure without the secret", err)
		}
		if src := e.source(t); !strings.HasPrefix(src.Error, "fetch failed: git fetch:") || strings.Contains(src.Error, "secret1") ||
			!strings.Contains(src.Error, "?***") {
			t.Fatalf("stored sync error %q: want git's message, redacted", src.Error)
		}

		stored := "https://ghp_secret2@127.0.0.1:1/r.git?access_token=secret3"
		if err := e.db.PutSource(t.Context(), catalog.Source{Workspace: ws, ID: "old", URL: stored, Branch: "main"}); err != nil {
			t.Fatal(err)
		}
		_, err = e.syncer.Sync(t.Context(), ws, "old")
		if !errors.Is(err, source.ErrCredentialsInURL) || strings.Contains(err.Error(), "secret") {
			t.Fatalf("sync of a stored URL with credentials: %v; want refused, redacted", err)
		}
		if src, _ := e.db.GetSource(t.Context(), ws, "old"); strings.Contains(src.Error, "secret") || !strings.Contains(src.Error, "credential helper") {
			t.Fatalf("stored error %q", src.Error)
		}
	})
}
