package sandbox

import (
	"os"
	"sync"
	"syscall"
)

// cgroupFiles keeps open the memory files of a job's cgroup, which a warm
// tree's pool reads after every job (its memory, its OOM count), and
// reads each from its start with one pread: such a file is generated
// afresh at offset 0, and the open and close around every read were most
// of its cost. Not cgroup.procs: on cgroup v1 an open one keeps the pid
// list it first loaded.
type cgroupFiles struct {
	mu   sync.Mutex
	open map[string]*os.File
}

// read returns the contents of the cgroup file at path.
func (c *cgroupFiles) read(path string) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.open[path]
	if f == nil {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, err
		}
		if c.open == nil {
			c.open = map[string]*os.File{}
		}
		c.open[path] = f
	}
	buf := make([]byte, 4096)
	for {
		n, err := pread(f, buf)
		if err != nil {
			return nil, err
		}
		if n < len(buf) {
			return buf[:n], nil
		}
		buf = make([]byte, 2*len(buf)) // it did not fit: read it whole again
	}
}

// pread reads f from offset 0 into buf, retrying an interrupted call.
func pread(f *os.File, buf []byte) (int, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var n int
	var rerr error
	err = raw.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Pread(int(fd), buf, 0)
			if rerr != syscall.EINTR {
				return true
			}
		}
	})
	if err != nil {
		return 0, err
	}
	return n, rerr
}

// close closes every file kept open.
func (c *cgroupFiles) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for path, f := range c.open {
		_ = f.Close()
		delete(c.open, path)
	}
}
