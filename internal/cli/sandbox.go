package cli

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/windforce/windforce/runner/sandbox"
)

// defaultConcurrency is how many jobs a worker runs at once by default:
// four per CPU, because script jobs mostly wait on the network (APIs,
// databases) and a CPU-bound trivial job still leaves the CPU idle while
// its runtime starts; memory, not CPU, is the bound (see docs/WORKERS.md).
func defaultConcurrency() int { return 4 * runtime.NumCPU() }

// sandboxFlags configure the job sandbox of `worker` and `dev` (DESIGN §6);
// their settings are in settings.go.
type sandboxFlags struct {
	mode, uids string
	memory     size
	pids       int
	cpu        float64
}

// config is the sandbox configuration; hide are host paths jobs must not
// see besides WINDFORCE_DIR (the database file's and object cache's
// directories).
func (f *sandboxFlags) config(hide ...string) (sandbox.Config, error) {
	var cfg sandbox.Config
	switch f.mode {
	case "on":
	case "off":
		cfg.Off = true
	default:
		return cfg, &UsageError{Msg: fmt.Sprintf("--sandbox=%q: want on or off", f.mode)}
	}
	first, last, ok := strings.Cut(f.uids, "-")
	a, err1 := strconv.ParseUint(first, 10, 32)
	b, err2 := strconv.ParseUint(last, 10, 32)
	if !ok || err1 != nil || err2 != nil || a == 0 || b < a {
		return cfg, &UsageError{Msg: fmt.Sprintf("--sandbox-uids=%q: want FIRST-LAST, two uids above 0", f.uids)}
	}
	cfg.FirstUID, cfg.UIDCount = uint32(a), uint32(b-a+1)
	if f.pids < 1 || f.cpu < 0 {
		return cfg, &UsageError{Msg: "--job-pids must be at least 1 and --job-cpu not negative"}
	}
	cfg.Max = sandbox.Limits{Memory: int64(f.memory), Pids: f.pids, CPU: f.cpu}
	cfg.Defaults = cfg.Max
	for _, h := range hide {
		if h != "" {
			cfg.Hide = append(cfg.Hide, h)
		}
	}
	return cfg, nil
}

// localDirs are the directories of a sqlite:// database and a file://
// object cache, which jobs must not see.
func localDirs(dbURL, objectCache string) []string {
	var dirs []string
	if p, ok := strings.CutPrefix(dbURL, "sqlite://"); ok {
		if abs, err := filepath.Abs(p); err == nil {
			dirs = append(dirs, filepath.Dir(abs))
		}
	}
	if p, ok := strings.CutPrefix(objectCache, "file://"); ok {
		if abs, err := filepath.Abs(p); err == nil {
			dirs = append(dirs, abs)
		}
	}
	return dirs
}
