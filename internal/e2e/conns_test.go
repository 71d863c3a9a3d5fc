package e2e_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestIdleConnectionsCannotExhaustServer is the attack of a client with no
// token: it opens far more connections than the server may hold, half of
// them keep-alive connections left idle after a request, half never
// sending a byte. A real `windforce server` (bounded to 32 connections)
// keeps answering /healthz and an authenticated call, and its open file
// descriptors stay near the bound instead of growing with the attack.
// Before the bound, each connection held a descriptor until the process
// refused everything with "too many open files".
func TestIdleConnectionsCannotExhaustServer(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	const token = "conns-admin-token-0123456789abcdefghij"
	p := start(t, []string{"WINDFORCE_ADMIN_TOKEN=" + token, "WINDFORCE_SECRET=conns-secret-0123456789abcdefghijkl"},
		"server", "--listen", "127.0.0.1:0", "--sync-interval", "0", "--max-connections", "32",
		"--database-url", "sqlite://"+filepath.Join(root, "wf.db"), "--object-cache", "file://"+filepath.Join(root, "objects"))
	base := p.line(t, "windforce server listening on ")
	addr := strings.TrimPrefix(base, "http://")
	fdsBefore := openFDs(t, p.cmd.Process.Pid)

	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 400 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
			if res, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	for _, path := range []string{"/healthz", "/api/w/default/apps"} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s behind 400 idle connections: %v", path, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s behind 400 idle connections: %d", path, res.StatusCode)
		}
	}
	if fds := openFDs(t, p.cmd.Process.Pid); fds > fdsBefore+32+8 {
		t.Fatalf("server holds %d file descriptors (%d before the attack), want at most the bound of 32 more", fds, fdsBefore)
	}
}

// openFDs counts the open file descriptors of process pid.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}
