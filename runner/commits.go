package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/spine"
)

// readySuffix names the file beside a commit folder that says the folder
// is complete, installed and read-only; it holds the folder's size. It is
// written last, so a worker that dies half-way leaves a folder without it
// and the next job prepares it again.
const readySuffix = ".ready"

// prepareTimeout bounds one download and install of a commit.
const prepareTimeout = 15 * time.Minute

// commitCache keeps the worker's per-commit copies under Dir/commits. Jobs
// of one commit share one read-only copy; preparing it (download, install)
// happens once, whichever jobs ask at the same time.
type commitCache struct {
	r       *Runner
	mu      sync.Mutex
	flights map[string]*flight
	inUse   map[string]int
}

// flight is one preparation in progress; the jobs that asked meanwhile
// wait for done and share err.
type flight struct {
	done chan struct{}
	err  error
}

func newCommitCache(r *Runner) *commitCache {
	return &commitCache{r: r, flights: map[string]*flight{}, inUse: map[string]int{}}
}

// dir is the local copy of a commit.
func (c *commitCache) dir(key objectcache.Key) string {
	return filepath.Join(c.r.cfg.commitsDir(), key.Workspace, key.Source, key.Commit)
}

// acquire returns the ready copy of the job's commit, preparing it when
// needed, and a release to call when the job is done with it (a commit in
// use is never evicted). A failed preparation is not remembered: the next
// job tries again.
func (c *commitCache) acquire(ctx context.Context, job *spine.ClaimedJob, rt runtimeSpec) (string, func(), error) {
	key := objectcache.Key{Workspace: job.Workspace, Source: job.Pin.GitSourceID, Commit: job.Pin.CommitSHA}
	if err := key.Validate(); err != nil {
		return "", nil, fmt.Errorf("pinned commit: %w", err)
	}
	dir := c.dir(key)
	for {
		c.mu.Lock()
		if isReady(dir) {
			c.inUse[dir]++
			c.mu.Unlock()
			now := time.Now()
			_ = os.Chtimes(dir+readySuffix, now, now) // last use, for eviction
			return dir, func() { c.release(dir) }, nil
		}
		f := c.flights[dir]
		if f == nil {
			f = &flight{done: make(chan struct{})}
			c.flights[dir] = f
			go c.prepare(key, dir, rt, f)
		}
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return "", nil, fmt.Errorf("waiting for commit %s: %w", key.Commit, context.Cause(ctx))
		}
		if f.err != nil {
			return "", nil, f.err
		}
	}
}

func (c *commitCache) release(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inUse[dir]--; c.inUse[dir] <= 0 {
		delete(c.inUse, dir)
	}
}

func isReady(dir string) bool {
	_, err := os.Stat(dir + readySuffix)
	return err == nil
}

// prepare downloads, installs and seals one commit. It runs on its own
// context: a job canceled while waiting does not abort the others' install.
func (c *commitCache) prepare(key objectcache.Key, dir string, rt runtimeSpec, f *flight) {
	ctx, cancel := context.WithTimeout(context.Background(), prepareTimeout)
	defer cancel()
	f.err = c.prepareOnce(ctx, key, dir, rt)
	c.mu.Lock()
	delete(c.flights, dir)
	c.mu.Unlock()
	close(f.done)
	if f.err == nil {
		c.evict(dir)
	}
}

func (c *commitCache) prepareOnce(ctx context.Context, key objectcache.Key, dir string, rt runtimeSpec) error {
	// Materialize refuses a tree without its marker and leaves an existing
	// complete copy alone.
	if err := objectcache.Materialize(ctx, c.r.cfg.Cache, key, dir); err != nil {
		return fmt.Errorf("fetch commit %s: %w", key, err)
	}
	// The workspace's and source's folders: searchable, not listable.
	for _, d := range []string{filepath.Dir(dir), filepath.Dir(filepath.Dir(dir))} {
		if err := os.Chmod(d, 0o711); err != nil {
			return fmt.Errorf("prepare commit %s: %w", key, err)
		}
	}
	// A copy left by an install that failed or was interrupted is made
	// writable again before the next install.
	if _, err := walkMode(dir, true); err != nil {
		return fmt.Errorf("prepare commit %s: %w", key, err)
	}
	if err := c.r.install(ctx, key.Workspace, dir, rt); err != nil {
		return err
	}
	size, err := walkMode(dir, false)
	if err != nil {
		return fmt.Errorf("seal commit %s: %w", key, err)
	}
	if err := os.WriteFile(dir+readySuffix, []byte(strconv.FormatInt(size, 10)), 0o644); err != nil {
		return fmt.Errorf("seal commit %s: %w", key, err)
	}
	return nil
}

// walkMode makes a tree writable by its owner (writable) or the
// worker's and read-only for everyone (keeping execute bits), and
// returns its size. Symbolic links
// are skipped: chmod would follow them out of the tree.
func walkMode(root string, writable bool) (int64, error) {
	var size int64
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !writable {
			// An install ran as a job uid: the sealed copy belongs to the
			// worker again, so no job can write it whatever its mode.
			if err := os.Lchown(p, os.Geteuid(), os.Getegid()); err != nil {
				return err
			}
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if writable {
				return os.Chmod(p, 0o755) // before descending
			}
			dirs = append(dirs, p) // after the walk, or it could not descend
			return nil
		}
		size += info.Size()
		return os.Chmod(p, fileMode(info.Mode(), writable))
	})
	for i := len(dirs) - 1; err == nil && i >= 0; i-- {
		err = os.Chmod(dirs[i], 0o555)
	}
	return size, err
}

func fileMode(m fs.FileMode, writable bool) fs.FileMode {
	exec := m.Perm()&0o111 != 0
	switch {
	case writable && exec:
		return 0o755
	case writable:
		return 0o644
	case exec:
		return 0o555
	}
	return 0o444
}

// removeTree deletes a sealed copy (making it writable first).
func removeTree(dir string) error {
	if _, err := walkMode(dir, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.RemoveAll(dir)
}
