package runner

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
	"github.com/windforce/windforce/store/sqlite"
)

// BenchmarkHandle measures the runner alone (no queue): one trivial job
// handled cold (a fresh sandboxed process tree) and warm (a warm process
// of the pool), per runtime, the commit already prepared.
// `go test -bench Handle -run ^$ ./runner/`
func BenchmarkHandle(b *testing.B) {
	requireBun(b)
	testdb.RequireSandbox(b)
	ctx := context.Background()
	d, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "wf.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s := store.New(d)
	defer s.Close()
	root := b.TempDir()
	cache, err := objectcache.NewFileCache(filepath.Join(root, "objects"))
	if err != nil {
		b.Fatal(err)
	}
	for _, f := range warmFixtures {
		var files []objectcache.File
		data, err := os.ReadFile(filepath.Join("testdata", f.dir, f.entry))
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, objectcache.File{Path: f.entry, Mode: 0o644, Data: data})
		if err := cache.Put(ctx, objectcache.Key{Workspace: "ws", Source: "src", Commit: "c-" + f.runtime}, files); err != nil {
			b.Fatal(err)
		}
	}
	r, err := New(Config{Store: s, Cache: cache, Dir: filepath.Join(root, "wf"), Secret: []byte("bench"),
		URL: "http://127.0.0.1:1", Logger: slog.New(slog.DiscardHandler), WarmProcesses: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { unsealAll(nil, filepath.Join(root, "wf")); r.Close() }()
	for _, f := range warmFixtures {
		for _, warm := range []bool{false, true} {
			b.Run(f.runtime+map[bool]string{false: "/cold", true: "/warm"}[warm], func(b *testing.B) {
				pin := spine.Pin{GitSourceID: "src", CommitSHA: "c-" + f.runtime, AppKey: f.runtime, ActionKey: "wrong",
					Entrypoint: f.entry, Runtime: f.runtime, Timeout: time.Minute}
				if warm {
					pin.Warm = &spine.DefaultWarm
				}
				for b.Loop() {
					j := &spine.ClaimedJob{ID: uuid.New(), Workspace: "ws", Pin: pin, ClaimToken: uuid.New(), Attempt: 1, StartedAt: time.Now()}
					if _, err := r.Handle(ctx, j); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
