package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// newTest starts a sandbox hiding a fresh directory, or skips loudly when
// this host cannot enforce one (CI requires it: WINDFORCE_TEST_REQUIRE_SANDBOX).
func newTest(t *testing.T, cfg Config) (*Sandbox, string) {
	t.Helper()
	hide := t.TempDir()
	cfg.Hide = append(cfg.Hide, hide)
	s, err := New(cfg)
	if err != nil {
		if os.Getenv("WINDFORCE_TEST_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("sandbox required (WINDFORCE_TEST_REQUIRE_SANDBOX=1): %v", err)
		}
		t.Skipf("SKIPPING: no job sandbox on this host: %v", err)
	}
	t.Cleanup(s.Close)
	return s, hide
}

// jobDir makes hide/j, a job directory a sandboxed job can reach.
func jobDir(t *testing.T, hide string) string {
	t.Helper()
	dir := filepath.Join(hide, "j")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	searchable(t, dir)
	return dir
}

// run runs sh -c script in a sandbox with dir writable, and returns its
// output and exit.
func run(t *testing.T, s *Sandbox, dir, script string, l Limits) (string, Exit) {
	t.Helper()
	var out strings.Builder
	w := &syncWriter{b: &out}
	p, err := s.Start(Spec{Name: "t-" + strconv.FormatInt(time.Now().UnixNano(), 36), Argv: []string{"/bin/sh", "-c", script},
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir, Writable: []string{dir}, Limits: l, Stdout: w, Stderr: w})
	if err != nil {
		t.Fatal(err)
	}
	ex := p.Wait()
	return out.String(), ex
}

func TestSandboxedIdentity(t *testing.T) {
	t.Parallel()
	for _, direct := range []bool{true, false} {
		t.Run(map[bool]string{true: "direct", false: "through setpriv"}[direct], func(t *testing.T) {
			t.Parallel()
			testIdentity(t, direct)
		})
	}
}

// searchable opens dir's test-made parents to others (t.TempDir makes
// them 0700), so bwrap can start as the job's uid (see direct.go).
func searchable(t *testing.T, dir string) {
	t.Helper()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
}

func testIdentity(t *testing.T, direct bool) {
	s, hide := newTest(t, Config{})
	secret := filepath.Join(hide, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(hide, "jobs", "j1")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if direct {
		searchable(t, dir)
	}
	if got := s.direct(Spec{Writable: []string{dir}, Dir: dir}); got != direct {
		t.Fatalf("direct start %v, want %v", got, direct)
	}
	out, ex := run(t, s, dir, `id -u; echo x > /dev/null && echo devnull; grep -E '^(NoNewPrivs|CapEff)' /proc/self/status; cat `+secret+` || echo hidden; echo ok > f && cat f; unshare -U true 2>/dev/null && echo nested-userns; ls /proc | grep -cE '^[0-9]+$'`, Limits{})
	if !ex.Success() {
		t.Fatalf("exit %v: %s", ex, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	uid, _ := strconv.Atoi(lines[0])
	if uid == 0 || uid == os.Geteuid() {
		t.Errorf("job runs as uid %d", uid)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "CapEff:\t0000000000000000", "hidden", "ok", "devnull"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if direct && strings.Contains(out, "nested-userns") {
		t.Errorf("a directly started job made a nested user namespace:\n%s", out)
	}
}

func TestSandboxLimits(t *testing.T) {
	t.Parallel()
	s, hide := newTest(t, Config{})
	dir := jobDir(t, hide)
	out, ex := run(t, s, dir, `head -c 300000000 /dev/zero | tail > /dev/null`, Limits{Memory: 64 << 20})
	if !ex.OOM || !strings.Contains(ex.String(), "out of memory (limit 64MiB)") {
		t.Errorf("300 MB in 64 MiB: exit %v, output %s", ex, out)
	}
	out, ex = run(t, s, dir, `for i in $(seq 1 40); do sleep 5 & done 2>/dev/null; wait; echo done`, Limits{Pids: 10})
	if ex.Success() && strings.Contains(out, "done") {
		t.Errorf("40 sleeps under pids 10: exit %v, output %s", ex, out)
	}
}

func TestOutermost(t *testing.T) {
	t.Parallel()
	got := outermost([]string{"/a/wf", "/a", "/b/", "/a/objects", "/b", "/c/d"})
	if strings.Join(got, ",") != "/a,/b,/c/d" {
		t.Fatalf("outermost: %v", got)
	}
}

// TestDirectNeedsSearchableParents: bwrap starts as the job's uid only
// when that uid can reach every shown path; a 0700 parent of a writable
// or read-only path sends the start through setpriv.
func TestDirectNeedsSearchableParents(t *testing.T) {
	t.Parallel()
	s, hide := newTest(t, Config{})
	job := filepath.Join(hide, "jobs", "j")
	commit := filepath.Join(hide, "commits", "c")
	for _, d := range []string{job + "/tmp", commit} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	spec := Spec{Dir: commit, ReadOnly: []string{commit}, Writable: []string{job}, Tmp: job + "/tmp"}
	if s.direct(spec) {
		t.Fatal("direct start with 0700 parents")
	}
	searchable(t, job)
	if s.direct(spec) {
		t.Fatal("direct start with the commit's parents 0700")
	}
	searchable(t, commit)
	if err := os.Chmod(commit, 0o555); err != nil { // readable, as a sealed commit copy
		t.Fatal(err)
	}
	s.search = searchCache{} // the modes changed under the cache
	if !s.direct(spec) {
		t.Fatal("no direct start with every parent searchable")
	}
}
