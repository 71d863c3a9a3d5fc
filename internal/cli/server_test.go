package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunServerServesAndStops runs `windforce server` on SQLite: it
// migrates, answers /readyz and an authenticated API call with the
// bootstrap admin token, and returns cleanly when ctx ends.
func TestRunServerServesAndStops(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- RunServer(ctx, []string{"--listen", "127.0.0.1:0", "--database-url", "sqlite://" + filepath.Join(root, "wf.db"),
			"--object-cache", "file://" + filepath.Join(root, "objects"), "--admin-token", bootToken, "--sync-interval", "0"}, outW, io.Discard)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("read banner: %v (server: %v)", err, <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	_, base, ok := strings.Cut(strings.TrimSpace(line), "listening on ")
	if !ok {
		t.Fatalf("banner %q", line)
	}
	get := func(path, token string) int {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := get("/readyz", ""); c != 200 {
		t.Fatalf("readyz %d", c)
	}
	if c := get("/api/w/ws/apps", bootToken); c != 200 {
		t.Fatalf("apps with the admin token %d", c)
	}
	if c := get("/api/w/ws/apps", ""); c != 401 {
		t.Fatalf("apps without a token %d", c)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("server returned %v", err)
	}
}

// TestServerFlagsFromEnv: WINDFORCE_* variables configure the server and
// a malformed one is a usage error naming it.
func TestServerFlagsFromEnv(t *testing.T) {
	t.Setenv("WINDFORCE_LISTEN", "0.0.0.0:9999")
	t.Setenv("WINDFORCE_SYNC_INTERVAL", "5s")
	f, err := parseServerFlags(nil, io.Discard)
	if err != nil || f.listen != "0.0.0.0:9999" || f.syncInterval.String() != "5s" {
		t.Fatalf("flags %+v, %v", f, err)
	}
	t.Setenv("WINDFORCE_RETENTION", "forever")
	if _, err := parseServerFlags(nil, io.Discard); err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), "WINDFORCE_RETENTION") {
		t.Fatalf("bad variable: %v", err)
	}
}

// bootToken is the bootstrap admin token of the server tests.
const bootToken = "boot-token-of-at-least-32-bytes-0123"
