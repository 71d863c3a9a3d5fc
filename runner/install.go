package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/windforce/windforce/runner/sandbox"
)

// maxInstallOutput bounds the installer output kept for the job logs.
const maxInstallOutput = 64 << 10

// InstallError is a failed dependency install; Output is what the
// installer printed (its tail), which goes to the logs of every job that
// waited for it.
type InstallError struct {
	Command string
	Output  string
	Err     error
}

// Error names the installer and why it failed.
func (e *InstallError) Error() string {
	return fmt.Sprintf("installing dependencies (%s) failed: %v", e.Command, e.Err)
}

// Unwrap returns the installer's exit error.
func (e *InstallError) Unwrap() error { return e.Err }

// installCommand picks the installer from the committed lockfile: npm ci
// for a package-lock.json (or a node app without a bun lockfile), bun
// install --frozen-lockfile otherwise. Nil when there is no package.json.
func installCommand(dir string, rt runtimeSpec) []string {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(dir, name))
		return err == nil
	}
	if !has("package.json") {
		return nil
	}
	bunLock := has("bun.lock") || has("bun.lockb")
	if !bunLock && (has("package-lock.json") || rt.name == "node") {
		return []string{"npm", "ci", "--no-audit", "--no-fund"}
	}
	return []string{"bun", "install", "--frozen-lockfile"}
}

// install runs the commit's installer in the commit folder inside the
// job sandbox (package lifecycle scripts are untrusted code too), with a
// clean environment (no database URL or secret reaches install scripts)
// and a HOME per workspace, so package caches are reused within a
// workspace but one workspace's install cannot poison another's cache.
func (r *Runner) install(ctx context.Context, ws, dir string, rt runtimeSpec) error {
	argv := installCommand(dir, rt)
	if argv == nil {
		return nil
	}
	exe, err := r.cfg.executable(argv[0])
	if err != nil {
		return &InstallError{Command: joinArgs(argv), Err: err}
	}
	// The workspace's package cache is given to each install's uid in
	// turn: two installs of one workspace (two new commits at once) wait
	// for each other rather than take it from under each other.
	mu, _ := r.installLocks.LoadOrStore(ws, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	defer mu.(*sync.Mutex).Unlock()
	home := filepath.Join(r.cfg.installHome(), ws)
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		return fmt.Errorf("install: %w", err)
	}
	out := &lockedTail{t: tailBuffer{max: maxInstallOutput}}
	env := append(neutralEnv(), "HOME="+home, "TMPDIR="+filepath.Join(home, "tmp"))
	spec := sandbox.Spec{Name: "install-" + filepath.Base(dir), Argv: append([]string{exe}, argv[1:]...), Env: env, Dir: dir,
		ReadOnly: r.runtimeDirs(runtimeSpec{exe: exe}, exe), Writable: []string{dir, home}, Tmp: filepath.Join(home, "tmp")}
	r.log.Info("installing dependencies", "dir", dir, "command", joinArgs(argv))
	exit, err := r.runProcess(ctx, spec, out)
	if err == nil && !exit.Success() {
		err = errors.New(exit.String())
	}
	if err != nil {
		return &InstallError{Command: joinArgs(argv), Output: out.String(), Err: err}
	}
	return nil
}

// lockedTail is a tailBuffer written by the output copy and read after.
type lockedTail struct {
	mu sync.Mutex
	t  tailBuffer
}

func (l *lockedTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.Write(p)
}

func (l *lockedTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t.String()
}

// neutralEnv is the part of the worker's environment a child may see.
func neutralEnv() []string {
	var env []string
	for _, name := range []string{"PATH", "LANG", "LC_ALL", "TZ"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

func joinArgs(argv []string) string { return strings.Join(argv, " ") }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		t.cut = true
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
		t.cut = true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	if t.cut {
		return "…(earlier installer output cut)\n" + string(t.buf)
	}
	return string(t.buf)
}

// isInstallError reports whether err carries installer output.
func isInstallError(err error) (*InstallError, bool) {
	var ie *InstallError
	ok := errors.As(err, &ie)
	return ie, ok
}
