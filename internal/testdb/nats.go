package testdb

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// NATSServer is a nats-server process of the test's own (JetStream on,
// its store in a temp dir, a free port on 127.0.0.1), so a test may stop,
// kill and restart it without disturbing anyone else's.
type NATSServer struct {
	// URL is nats://127.0.0.1:PORT, the same across restarts.
	URL string

	t       testing.TB
	bin     string
	port    int
	dir     string
	cmd     *exec.Cmd
	stopped bool
}

// natsServerBins are where nats-server is looked for, after $PATH.
var natsServerBins = []string{"/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"}

// RequireNATS returns the nats-server binary, or skips t with a loud
// message when there is none, or fails it when
// WINDFORCE_TEST_REQUIRE_NATS=1 (CI).
func RequireNATS(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("nats-server"); err == nil {
		return p
	}
	for _, p := range natsServerBins {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p
		}
	}
	Unavailable(t, "WINDFORCE_TEST_REQUIRE_NATS", "nats-server", errors.New("not on $PATH nor in /usr/sbin"))
	return ""
}

// StartNATS starts a nats-server of the test's own and kills it at the
// test's end.
func StartNATS(t testing.TB) *NATSServer {
	t.Helper()
	bin := RequireNATS(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	n := &NATSServer{t: t, bin: bin, port: port, dir: filepath.Join(t.TempDir(), "nats"),
		URL: "nats://127.0.0.1:" + strconv.Itoa(port)}
	t.Cleanup(func() { n.Kill() })
	n.Start()
	return n
}

// Start starts the server (again, with the same port and store dir) and
// waits until it accepts connections.
func (n *NATSServer) Start() {
	n.t.Helper()
	cmd := exec.Command(n.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(n.port), "-js", "-sd", n.dir)
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("start nats-server: %v", err)
	}
	n.cmd, n.stopped = cmd, false
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", n.port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nats-server on port %d did not come up: %v", n.port, err)
		}
		time.Sleep(50 * time.Millisecond) // polling for a port, not waiting for an event
	}
}

// Kill SIGKILLs the server and waits for it; a no-op when not running.
func (n *NATSServer) Kill() {
	if n.cmd == nil || n.stopped {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	_ = n.cmd.Wait()
	n.stopped = true
}

// Pause SIGSTOPs the server (connections stay open, nothing answers);
// Resume SIGCONTs it.
func (n *NATSServer) Pause() { _ = n.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (n *NATSServer) Resume() { _ = n.cmd.Process.Signal(syscall.SIGCONT) }
