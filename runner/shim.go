package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The job shim is the first process of every job: the worker binary
// itself (/proc/self/exe) started with shimEnv set, whose init below runs
// the shim instead of the program. It exists for one case the worker
// cannot handle itself: the worker being SIGKILLed (or crashing). The
// shim gets SIGTERM from the kernel when the worker dies (Pdeathsig),
// sees that its parent changed, and kills the job's whole tree (group and
// marker, SIGTERM, kill grace, SIGKILL), so no process of the job
// outlives the worker by more than the grace. In every other case it only
// waits for the job and passes its exit status on; the worker stops the
// tree, the shim included.
//
//	worker ──Setpgid, Pdeathsig=SIGTERM──▶ shim ──Pdeathsig=SIGKILL──▶ job (bun/node/python/command)
const shimEnv = "WF_RUNNER_SHIM"

func init() {
	if os.Getenv(shimEnv) == "1" {
		os.Exit(runShim(os.Args[1:]))
	}
}

// shimArgv is the command line that runs argv under the shim.
func shimArgv(grace time.Duration, jobID string, argv []string) []string {
	head := []string{"/proc/self/exe", strconv.FormatInt(grace.Milliseconds(), 10), jobID, strconv.Itoa(os.Getpid())}
	return append(head, argv...)
}

// runShim is the shim's main: args are grace (ms), job id, the worker's
// pid, then the job's command line. It returns the exit status.
func runShim(args []string) int {
	if len(args) < 4 {
		fmt.Fprintln(os.Stderr, "windforce job shim: missing arguments")
		return 2
	}
	graceMS, err1 := strconv.Atoi(args[0])
	workerPid, err2 := strconv.Atoi(args[2])
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintln(os.Stderr, "windforce job shim:", err)
		return 2
	}
	grace, marks := time.Duration(graceMS)*time.Millisecond, newTreeMarks(os.Getpid(), args[1])
	if marks.cgroup = os.Getenv(cgroupEnv); marks.cgroup != "" {
		if err := joinCgroup(marks.cgroup); err != nil {
			fmt.Fprintln(os.Stderr, "windforce: job runs without its cgroup:", err)
			marks.cgroup = ""
		}
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	cmd := exec.Command(args[3], args[4:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.Env = withoutVar(withoutVar(os.Environ(), shimEnv), cgroupEnv)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "windforce: start job:", err)
		return 127
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if os.Getppid() != workerPid { // the worker died before Pdeathsig was armed
		marks.kill(grace)
		return 137
	}
	for {
		select {
		case err := <-exited:
			return passOn(cmd, err)
		case <-sigs:
			if os.Getppid() != workerPid {
				marks.kill(grace)
				return 137
			}
			// A signal to the group from the worker: the job got it too.
		}
	}
}

// passOn ends the shim the way the job ended: the same exit status, or
// the same signal.
func passOn(cmd *exec.Cmd, err error) int {
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		signal.Reset(ws.Signal())
		_ = syscall.Kill(os.Getpid(), ws.Signal())
		time.Sleep(100 * time.Millisecond) // the signal is delivered meanwhile
	}
	if err != nil && cmd.ProcessState == nil {
		return 127
	}
	return cmd.ProcessState.ExitCode()
}

func withoutVar(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
