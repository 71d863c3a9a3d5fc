package runner

import (
	"embed"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

//go:embed wrappers/wrapper.mjs wrappers/wrapper.py wrappers/warm.mjs wrappers/warm.py
var wrappers embed.FS

// runtimeSpec says how one runtime of the entry contract starts a job.
type runtimeSpec struct {
	name string
	// exe is the executable looked up in PATH (or Config.Runtimes); empty
	// for command, which runs the entrypoint itself.
	exe string
	// wrapper is the embedded file copied into the job dir, if any.
	wrapper string
	// args are the arguments before the wrapper path.
	args []string
	// warm is the embedded wrapper of its warm processes (DESIGN §7);
	// empty: the runtime has none and its jobs always start cold.
	warm string
}

var runtimes = map[string]runtimeSpec{
	"bun":     {name: "bun", exe: "bun", wrapper: "wrapper.mjs", args: []string{"--no-install"}, warm: "warm.mjs"},
	"node":    {name: "node", exe: "node", wrapper: "wrapper.mjs", warm: "warm.mjs"},
	"python":  {name: "python", exe: "python3", wrapper: "wrapper.py", args: []string{"-u", "-B"}, warm: "warm.py"},
	"command": {name: "command"},
}

// lookupRuntime returns the runtime a pin names; empty means bun.
func lookupRuntime(name string) (runtimeSpec, error) {
	if name == "" {
		name = "bun"
	}
	rt, ok := runtimes[name]
	if !ok {
		return rt, fmt.Errorf("unknown runtime %q (want bun, node, python or command)", name)
	}
	return rt, nil
}

// executable resolves a program by name: Config.Runtimes first, then PATH.
func (c *Config) executable(name string) (string, error) {
	if p, ok := c.Runtimes[name]; ok && p != "" {
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s is not installed on this worker: %w", name, err)
	}
	return p, nil
}

// argv is the command line of a job: the runtime with the wrapper, or the
// entrypoint itself for command.
func (c *Config) argv(rt runtimeSpec, jd *jobDir) ([]string, error) {
	if rt.exe == "" {
		return []string{jd.entrypoint}, nil
	}
	return c.runtimeArgv(rt, jd.wrapper)
}

// runtimeArgv is the runtime's command line running wrapper.
func (c *Config) runtimeArgv(rt runtimeSpec, wrapper string) ([]string, error) {
	exe, err := c.executable(rt.exe)
	if err != nil {
		return nil, err
	}
	args := append([]string{resolveRuntime(exe).exe}, rt.args...)
	return append(args, wrapper), nil
}

// resolvedRuntime is a runtime executable as the sandbox must show it.
type resolvedRuntime struct {
	exe  string   // the real program (a shim's target)
	dirs []string // what it needs visible outside the system directories
}

// runtimeCache resolves each runtime executable once per worker.
var runtimeCache sync.Map // path → resolvedRuntime

// resolveRuntime finds what a runtime executable needs inside the
// sandbox, which shows only the system directories and what is bound: a
// binary's own directory (bun in ~/.bun/bin), and for python the
// interpreter's prefix, behind any shim (pyenv's shims exec a path the
// job would not see).
func resolveRuntime(exe string) resolvedRuntime {
	if v, ok := runtimeCache.Load(exe); ok {
		return v.(resolvedRuntime)
	}
	rr := resolvedRuntime{exe: exe}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		rr.dirs = append(rr.dirs, filepath.Dir(real))
	}
	if strings.HasPrefix(filepath.Base(exe), "python") {
		out, err := exec.Command(exe, "-c", "import sys; print(sys.executable); print(sys.base_prefix)").Output()
		if lines := strings.Split(strings.TrimSpace(string(out)), "\n"); err == nil && len(lines) == 2 {
			rr.exe = lines[0]
			rr.dirs = []string{lines[1]}
			if real, err := filepath.EvalSymlinks(lines[0]); err == nil {
				rr.dirs = append(rr.dirs, filepath.Dir(real))
			}
		}
	}
	runtimeCache.Store(exe, rr)
	return rr
}
