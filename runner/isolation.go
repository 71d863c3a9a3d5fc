package runner

import (
	"os"
	"os/exec"
	"syscall"
)

// roPrelude runs first in a root job's own mount namespace: it bind-mounts
// the commit folder ($0) read-only over itself, enters it again (a working
// directory taken before the mount would still be writable), then execs
// the job. File
// modes alone do not stop root, so this is how a job run by a root worker
// "cannot write into the shared commit folder".
const roPrelude = `mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && cd "$0" && exec "$@"`

// probeReadOnlyMount reports whether jobs should (and can) get the
// read-only bind mount: only when the worker is root (otherwise the
// read-only file modes already hold) and mount namespaces work here.
func probeReadOnlyMount(dir string) (use bool, warn string) {
	if os.Geteuid() != 0 {
		return false, ""
	}
	probe, err := os.MkdirTemp(dir, ".probe-")
	if err != nil {
		return false, "cannot probe mount namespaces: " + err.Error()
	}
	defer os.RemoveAll(probe)
	cmd := exec.Command("/bin/sh", "-c", roPrelude, probe, "/bin/sh", "-c", `! touch "$0/x" 2>/dev/null`, probe)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	cmd.Env = neutralEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		return false, "the worker runs as root but cannot give jobs a read-only commit folder (mount namespace: " +
			err.Error() + " " + string(out) + "); jobs can write into it"
	}
	return true, ""
}

// isolate wraps argv in the job shim (shim.go) and, when the probe said
// so, the read-only mount prelude, and returns the SysProcAttr the shim
// starts with: its own process group (the tree is killed as one) and
// SIGTERM when the worker dies, which makes the shim kill the tree.
func (r *Runner) isolate(argv []string, commitDir, jobID string) ([]string, *syscall.SysProcAttr) {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if r.roMount {
		attr.Unshareflags = syscall.CLONE_NEWNS
		argv = append([]string{"/bin/sh", "-c", roPrelude, commitDir}, argv...)
	}
	return shimArgv(r.cfg.KillGrace, jobID, argv), attr
}
