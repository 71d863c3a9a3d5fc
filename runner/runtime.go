package runner

import (
	"embed"
	"fmt"
	"os/exec"
)

//go:embed wrappers/wrapper.mjs wrappers/wrapper.py
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
}

var runtimes = map[string]runtimeSpec{
	"bun":     {name: "bun", exe: "bun", wrapper: "wrapper.mjs", args: []string{"--no-install"}},
	"node":    {name: "node", exe: "node", wrapper: "wrapper.mjs"},
	"python":  {name: "python", exe: "python3", wrapper: "wrapper.py", args: []string{"-u", "-B"}},
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
	exe, err := c.executable(rt.exe)
	if err != nil {
		return nil, err
	}
	args := append([]string{exe}, rt.args...)
	return append(args, jd.wrapper), nil
}
