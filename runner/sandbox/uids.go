package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"sync"
)

// DefaultFirstUID and DefaultUIDCount are a root worker's job uids: far
// above the ranges distributions hand to people (1000–59999), system
// services and subordinate ids (100000 up, 65536 a user).
const (
	DefaultFirstUID = 0x70000000
	DefaultUIDCount = 65536
)

// uidPool leases job uids: a uid is held by one process tree from Start
// until every process of it is gone, so two running jobs never share one
// and a job can never signal or ptrace another.
type uidPool struct {
	mu    sync.Mutex
	first uint32
	count uint32
	next  uint32
	used  map[uint32]bool
}

func newUIDPool(first, count uint32) *uidPool {
	return &uidPool{first: first, count: count, used: map[uint32]bool{}}
}

// acquire leases the next free uid, round robin (a uid just released is
// the last to be reused).
func (p *uidPool) acquire() (uint32, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := uint32(0); i < p.count; i++ {
		uid := p.first + (p.next+i)%p.count
		if !p.used[uid] {
			p.used[uid] = true
			p.next = (p.next + i + 1) % p.count
			return uid, nil
		}
	}
	return 0, fmt.Errorf("sandbox: all %d job uids from %d are in use", p.count, p.first)
}

func (p *uidPool) release(uid uint32) {
	p.mu.Lock()
	delete(p.used, uid)
	p.mu.Unlock()
}

// idMapper writes a sandbox's uid and gid maps: inside uid 0 is the
// worker's own uid (so bubblewrap sets up mounts with the worker's file
// rights), inside uid U is host uid U (the job). Root writes the maps
// itself; a non-root worker goes through newuidmap/newgidmap, which check
// U against its subordinate ranges in /etc/subuid and /etc/subgid.
type idMapper struct {
	uid, gid             int
	newuidmap, newgidmap string // empty for root
	direct               bool   // bwrap started as the job's uid maps it itself
}

func (m idMapper) write(pid int, jobID uint32) error {
	if m.direct {
		return nil
	}
	if m.uid == 0 {
		maps := fmt.Sprintf("0 0 1\n%d %d 1\n", jobID, jobID)
		for _, f := range []string{"uid_map", "gid_map"} {
			if err := os.WriteFile(fmt.Sprintf("/proc/%d/%s", pid, f), []byte(maps), 0); err != nil {
				return fmt.Errorf("sandbox: write %s: %w", f, err)
			}
		}
		return nil
	}
	p, j := strconv.Itoa(pid), strconv.FormatUint(uint64(jobID), 10)
	for _, c := range [][]string{
		{m.newuidmap, p, "0", strconv.Itoa(m.uid), "1", j, j, "1"},
		{m.newgidmap, p, "0", strconv.Itoa(m.gid), "1", j, j, "1"},
	} {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("sandbox: %s: %w: %s", c[0], err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// jobUIDs picks the range job uids come from: the configured one for a
// root worker; for another user the first subordinate range that
// /etc/subuid and /etc/subgid both give it, which newuidmap must exist to
// map.
func jobUIDs(first, count uint32) (uint32, uint32, idMapper, error) {
	m := idMapper{uid: os.Geteuid(), gid: os.Getegid()}
	if m.uid == 0 {
		return first, count, m, nil
	}
	var err1, err2 error
	m.newuidmap, err1 = exec.LookPath("newuidmap")
	m.newgidmap, err2 = exec.LookPath("newgidmap")
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, m, fmt.Errorf("a non-root worker maps jobs onto subordinate ids with newuidmap and newgidmap (Debian: uidmap): %w", err)
	}
	u, err := user.Current()
	if err != nil {
		return 0, 0, m, fmt.Errorf("sandbox: %w", err)
	}
	us, uc, err := subordinate("/etc/subuid", u)
	if err != nil {
		return 0, 0, m, err
	}
	gs, gc, err := subordinate("/etc/subgid", u)
	if err != nil {
		return 0, 0, m, err
	}
	if gs != us {
		return 0, 0, m, fmt.Errorf("sandbox: /etc/subuid and /etc/subgid give %s different ranges (%d, %d); job uid and gid must match", u.Username, us, gs)
	}
	return us, min(uc, gc), m, nil
}

// subordinate reads the first range file gives to u (by name or uid).
func subordinate(file string, u *user.User) (start, count uint32, err error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, 0, fmt.Errorf("a non-root worker needs subordinate ids for %s in %s: %w", u.Username, file, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(parts) != 3 || (parts[0] != u.Username && parts[0] != u.Uid) {
			continue
		}
		s, err1 := strconv.ParseUint(parts[1], 10, 32)
		c, err2 := strconv.ParseUint(parts[2], 10, 32)
		if err1 == nil && err2 == nil && c > 0 {
			return uint32(s), uint32(c), nil
		}
	}
	return 0, 0, fmt.Errorf("a non-root worker needs subordinate ids: %s has no range for %s (usermod --add-subuids)", file, u.Username)
}
