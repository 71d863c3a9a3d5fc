package sandbox

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/windforce/windforce/internal/bytesize"
)

// Config configures a Sandbox. Zero values take the defaults.
type Config struct {
	// Off runs jobs unsandboxed (--sandbox=off): as the worker's user,
	// seeing what the worker sees, limited by nothing but their process
	// group. For hosts that cannot enforce the sandbox.
	Off bool
	// Bwrap and Setpriv are the executables (default: looked up in PATH).
	Bwrap, Setpriv string
	// FirstUID and UIDCount are a root worker's job uids
	// (WINDFORCE_SANDBOX_UIDS); a non-root worker takes its subordinate
	// range from /etc/subuid instead.
	FirstUID, UIDCount uint32
	// Defaults are a job's limits when its manifest names none; Max caps
	// whatever a manifest asks (WINDFORCE_JOB_MEMORY, …_PIDS, …_CPU).
	// Zero Defaults take DefaultMemory and DefaultPids; zero Max fields
	// are the Defaults.
	Defaults, Max Limits
	// Hide are host directories the job sees as empty (WINDFORCE_DIR):
	// only the paths a Spec names inside them are shown.
	Hide []string
	// Shared are host directories shown read-write to every job at the
	// same place (a cache all jobs may use). Never put anything private
	// there: every job of every workspace can read and change it.
	Shared []string
	Logger *slog.Logger
}

// Sandbox starts job processes (see the package doc). It is safe for
// concurrent use.
type Sandbox struct {
	cfg     Config
	log     *slog.Logger
	uids    *uidPool
	ids     idMapper
	cg      *cgroups
	system  []string // bwrap arguments for the host's system directories
	summary string
	search  searchCache
	// noDirect: the direct start failed its probe; every job goes
	// through setpriv.
	noDirect bool
}

// ErrUnavailable wraps every reason a host cannot enforce the sandbox.
var ErrUnavailable = errors.New("the job sandbox cannot be enforced on this host")

// New checks that the sandbox can be enforced here, by starting one
// sandboxed process, and refuses otherwise (unless cfg.Off). The error
// says what is missing.
func New(cfg Config) (*Sandbox, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Defaults.Memory <= 0 {
		cfg.Defaults.Memory = DefaultMemory
	}
	if cfg.Defaults.Pids <= 0 {
		cfg.Defaults.Pids = DefaultPids
	}
	cfg.Max = cfg.Max.Cap(cfg.Defaults, Limits{})
	cfg.Defaults = cfg.Defaults.Cap(Limits{}, cfg.Max)
	cfg.Hide = outermost(cfg.Hide)
	s := &Sandbox{cfg: cfg, log: cfg.Logger}
	if cfg.Off {
		s.summary = "off: jobs run as the worker's user and can read its files, environment and database"
		return s, nil
	}
	if err := s.setup(); err != nil {
		s.Close()
		return nil, fmt.Errorf("%w: %w (start with --sandbox=off to run jobs unsandboxed)", ErrUnavailable, err)
	}
	return s, nil
}

func (s *Sandbox) setup() error {
	var err error
	if s.cfg.Bwrap, err = lookup(s.cfg.Bwrap, "bwrap", "bubblewrap"); err != nil {
		return err
	}
	if s.cfg.Setpriv, err = lookup(s.cfg.Setpriv, "setpriv", "util-linux"); err != nil {
		return err
	}
	first, count := s.cfg.FirstUID, s.cfg.UIDCount
	if first == 0 {
		first, count = DefaultFirstUID, DefaultUIDCount
	}
	if first, count, s.ids, err = jobUIDs(first, count); err != nil {
		return err
	}
	s.uids = newUIDPool(first, count)
	if s.cg, err = findCgroups(); err != nil {
		return err
	}
	if !s.cg.v2 && !s.cg.favordynmods {
		s.log.Warn("cgroup v1: every job start waits for the kernel to move its first process into the job's cgroup (an RCU grace period, 5-20 ms); mount -o remount,favordynmods on the cgroup2 mount makes it 0.1 ms (docs/WORKERS.md)")
	}
	s.system = systemBinds()
	s.summary = fmt.Sprintf("on: bubblewrap, job uids %d-%d, %s, limits memory %s pids %d cpu %s by default",
		first, first+count-1, s.cg.describe(), bytesize.Format(s.cfg.Defaults.Memory), s.cfg.Defaults.Pids, cpuText(s.cfg.Defaults.CPU))
	return s.probe()
}

func cpuText(c float64) string {
	if c <= 0 {
		return "unlimited"
	}
	return fmt.Sprintf("%g", c)
}

// lookup resolves an executable, naming the package that has it.
func lookup(path, name, pkg string) (string, error) {
	if path == "" {
		path = name
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("%s not found (install %s): %w", name, pkg, err)
	}
	return p, nil
}

// probe runs /bin/true-like work through the whole path once: a host
// where any step fails (no user namespaces, no cgroup rights) is found at
// start, not at the first job. A root worker tries the direct start
// first (direct.go); where that fails (a kernel that lets only root make
// user namespaces, say) every job goes through setpriv instead.
func (s *Sandbox) probe() error {
	if s.ids.uid != 0 {
		return s.probeOnce()
	}
	err := s.probeOnce()
	if err == nil {
		return nil
	}
	s.noDirect = true
	if err2 := s.probeOnce(); err2 != nil {
		return errors.Join(err, err2)
	}
	s.log.Warn("jobs start through setpriv: bwrap cannot start as a job's uid here (2-3 ms more per job)", "reason", err)
	s.summary += "; through setpriv"
	return nil
}

func (s *Sandbox) probeOnce() error {
	dir, err := os.MkdirTemp("", "windforce-sandbox-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	var out strings.Builder
	p, err := s.Start(Spec{Name: filepath.Base(dir), Argv: []string{"/bin/sh", "-c", "exit 0"}, Dir: dir,
		Writable: []string{dir}, Stdout: &out, Stderr: &out})
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	done := make(chan Exit, 1)
	go func() { done <- p.Wait() }()
	select {
	case ex := <-done:
		if !ex.Success() {
			return fmt.Errorf("probe: %s: %s", ex, strings.TrimSpace(out.String()))
		}
	case <-time.After(30 * time.Second):
		p.Stop(0)
		return errors.New("probe: a sandboxed process did not finish in 30s")
	}
	return nil
}

// Enabled reports whether jobs are sandboxed (false with Config.Off).
func (s *Sandbox) Enabled() bool { return !s.cfg.Off }

// Describe is one line for the worker's start message and /readyz.
func (s *Sandbox) Describe() string { return s.summary }

// Close removes the worker's cgroup directories; call it after every
// Process has been waited for.
func (s *Sandbox) Close() {
	if s.cg != nil {
		s.cg.remove()
	}
}

// Spec is one process tree to start.
type Spec struct {
	// Name is unique among the worker's running processes (the cgroup's).
	Name string
	Argv []string
	// Env is the whole environment; nothing of the worker's is added.
	Env []string
	// Dir is the working directory (a path that is shown).
	Dir string
	// ReadOnly are host paths shown read-only at the same place.
	ReadOnly []string
	// Writable are host paths shown read-write at the same place; Start
	// gives their trees to the job's uid.
	Writable []string
	// Tmp, when set, is a writable host directory shown as /tmp.
	Tmp string
	// Limits are what the job asks for; Start fills unset fields from
	// the worker's defaults and caps every field by its maximum.
	Limits Limits
	// Stdout and Stderr receive the output. An *os.File is handed to the
	// process as it is (no copy in the worker).
	Stdout, Stderr io.Writer
	// Marker is an "NAME=value" entry of Env that marks the tree's
	// processes when the sandbox is off (found in /proc/*/environ).
	Marker string
	// ExtraFiles are handed to the command as descriptors ExtraFD,
	// ExtraFD+1, … (a warm runtime's request and response pipes).
	ExtraFiles []*os.File
}

// Exit is how a process tree ended.
type Exit struct {
	// Code is the exit status, or 128+signal when killed by a signal.
	Code int
	// OOM: the kernel killed a member for exceeding the memory limit.
	OOM bool
	// Memory is the limit that applied, for messages.
	Memory int64
	// Err is set when waiting itself failed.
	Err error
}

// Success reports a zero exit without OOM.
func (e Exit) Success() bool { return e.Err == nil && e.Code == 0 && !e.OOM }

// String describes the exit for messages.
func (e Exit) String() string {
	switch {
	case e.OOM:
		return fmt.Sprintf("out of memory (limit %s)", bytesize.Format(e.Memory))
	case e.Err != nil:
		return "process failed: " + e.Err.Error()
	case e.Code > 128 && e.Code < 128+65:
		return fmt.Sprintf("process killed by signal %d", e.Code-128)
	}
	return fmt.Sprintf("process exited with status %d", e.Code)
}

// outermost keeps the directories of dirs that are not inside another
// (a hidden directory hides everything below it; hiding an inner one
// again would cover what is shown inside the outer one).
func outermost(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		d = filepath.Clean(d)
		inner := slices.ContainsFunc(dirs, func(o string) bool {
			o = filepath.Clean(o)
			return o != d && strings.HasPrefix(d, o+"/")
		})
		if !inner && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
