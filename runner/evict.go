package runner

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// cachedCommit is one sealed commit copy as eviction sees it.
type cachedCommit struct {
	dir      string
	size     int64
	lastUsed time.Time
}

// evict removes sealed commit copies that are not in use, least recently
// used first, while they are older than MaxCacheAge or the copies together
// exceed MaxCacheBytes. The ready file goes first (under the lock), so no
// job can pick up a copy that is being deleted. keep is the copy just
// prepared, whose waiting jobs have not taken it yet.
func (c *commitCache) evict(keep string) {
	commits := c.listSealed()
	sort.Slice(commits, func(i, j int) bool { return commits[i].lastUsed.Before(commits[j].lastUsed) })
	var total int64
	for _, cc := range commits {
		total += cc.size
	}
	now := time.Now()
	for _, cc := range commits {
		if cc.dir == keep || total <= c.r.cfg.MaxCacheBytes && now.Sub(cc.lastUsed) <= c.r.cfg.MaxCacheAge {
			continue
		}
		if c.unseal(cc.dir) {
			total -= cc.size
			if err := removeTree(cc.dir); err != nil {
				c.r.log.Warn("evicting commit copy failed", "dir", cc.dir, "err", err)
			}
		}
	}
}

// unseal removes a copy's ready file unless a job uses the copy.
func (c *commitCache) unseal(dir string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inUse[dir] > 0 || c.flights[dir] != nil {
		return false
	}
	return os.Remove(dir+readySuffix) == nil
}

// listSealed finds the ready files at commits/{workspace}/{source}/.
func (c *commitCache) listSealed() []cachedCommit {
	matches, _ := filepath.Glob(filepath.Join(c.r.cfg.commitsDir(), "*", "*", "*"+readySuffix))
	out := make([]cachedCommit, 0, len(matches))
	for _, m := range matches {
		info, err := os.Stat(m)
		if err != nil {
			continue
		}
		data, _ := os.ReadFile(m)
		size, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		out = append(out, cachedCommit{dir: strings.TrimSuffix(m, readySuffix), size: size, lastUsed: info.ModTime()})
	}
	return out
}
