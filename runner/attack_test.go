package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// The attack suite: one job per escape found in review (issue 12), each
// asserting what DESIGN §6 promises. The jobs are real processes in the
// real sandbox; CI runs them as root (WINDFORCE_TEST_REQUIRE_SANDBOX=1
// makes a host without the sandbox a failure, not a skip).

// attackHarness is a harness whose WINDFORCE_DIR holds what dev keeps
// there (secret, admin token, database) and another workspace's commit.
type attackHarness struct {
	*harness
	objects string
	warm    bool
}

// attackStart is how the suite's jobs start: direct or through setpriv,
// cold or warm.
type attackStart struct{ direct, warm bool }

// setupAttack builds the harness; with direct, the test's temporary
// folders are made searchable (as /var/lib/windforce is) so jobs start
// the way production workers start them, bwrap directly as the job's uid;
// without, WINDFORCE_DIR lies below a 0700 folder and setpriv drops the
// uid (runner/sandbox/direct.go). With warm, every attack runs as a child
// of a warm node process (testdata/attack/attack.mjs): the sandbox holds
// the same for a process that lives across jobs.
func setupAttack(t *testing.T, start attackStart) *attackHarness {
	t.Helper()
	var objects string
	var warm *spine.Warm
	if start.warm {
		warm = &spine.DefaultWarm
	}
	h := setup(t, harnessOpts{concurrency: 6, warm: warm, cfg: func(c *Config) {
		objects = filepath.Join(filepath.Dir(c.Dir), "objects")
		c.Sandbox.Hide = []string{objects}
		c.WarmProcesses = 6
	}})
	if !h.runner.Sandbox().Enabled() {
		t.Fatal("the runner started without its sandbox")
	}
	for name, data := range map[string]string{"secret": "dev-secret", "admin-token": "wf_admin", "windforce.db": "SQLite format 3"} {
		if err := os.WriteFile(filepath.Join(h.dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(h.dir, "commits", "ws2", "src", "c-other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "main.sh"), []byte("#!/bin/sh\necho ws2\n"), 0o555); err != nil {
		t.Fatal(err)
	}
	h.putFixture("attack", "c-attack", nil)
	if start.direct {
		for d := filepath.Dir(h.dir); d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	return &attackHarness{harness: h, objects: objects, warm: start.warm}
}

// eachStart runs test once per way a root worker starts a sandbox, cold
// and warm.
func eachStart(t *testing.T, test func(t *testing.T, start attackStart)) {
	for _, start := range []attackStart{{true, false}, {false, false}, {true, true}, {false, true}} {
		name := map[bool]string{true: "direct", false: "setpriv"}[start.direct]
		if start.warm {
			name = "warm-" + name
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, start)
		})
	}
}

// warmOrCold runs test cold and warm, bwrap started directly.
func warmOrCold(t *testing.T, test func(t *testing.T, start attackStart)) {
	for _, warm := range []bool{false, true} {
		t.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(t *testing.T) {
			t.Parallel()
			test(t, attackStart{direct: true, warm: warm})
		})
	}
}

// attackJob is one attack's job: attack.sh itself, or its warm shim.
func (h *attackHarness) attackJob(action string, input string, l spine.Limits) job {
	j := job{commit: "c-attack", entry: "attack.sh", runtime: "command", action: action, input: input, limits: l}
	if h.warm {
		j.entry, j.runtime = "attack.mjs", "node"
	}
	return j
}

// attack runs one action and returns the finished job.
func (h *attackHarness) attack(action string, input map[string]string, l spine.Limits) spine.Job {
	h.t.Helper()
	in, _ := json.Marshal(input)
	return h.wait(h.enqueue(h.attackJob(action, string(in), l)), 60*time.Second)
}

type attackResult struct {
	Escaped bool   `json:"escaped"`
	Detail  string `json:"detail"`
}

// assertHeld fails when the job did not succeed or its attack worked.
func assertHeld(t *testing.T, j spine.Job) attackResult {
	t.Helper()
	var r attackResult
	if j.Status != spine.StatusSuccess || json.Unmarshal(j.Result, &r) != nil {
		t.Fatalf("job %s: %s %s %+v", j.Pin.ActionKey, j.Status, j.Result, j.Error)
	}
	if r.Escaped {
		t.Errorf("attack %s worked: %s", j.Pin.ActionKey, r.Detail)
	}
	return r
}

func TestAttackControlPlaneIsHidden(t *testing.T) {
	t.Parallel()
	eachStart(t, attackControlPlane)
}

func attackControlPlane(t *testing.T, start attackStart) {
	h := setupAttack(t, start)
	commit := filepath.Join(h.dir, "commits", "ws", "src", "c-attack")
	objectFiles, _ := filepath.Glob(filepath.Join(h.objects, "*", "*", "*", "*"))
	cases := []struct {
		name, action string
		input        map[string]string
	}{
		{"dev secret", "read", map[string]string{"path": filepath.Join(h.dir, "secret")}},
		{"admin token", "read", map[string]string{"path": filepath.Join(h.dir, "admin-token")}},
		{"database file", "read", map[string]string{"path": filepath.Join(h.dir, "windforce.db")}},
		{"object cache", "list", map[string]string{"path": h.objects}},
		{"object cache file", "read", map[string]string{"path": append(objectFiles, "/none")[0]}},
		{"other workspace's commit", "list", map[string]string{"path": filepath.Join(h.dir, "commits", "ws2")}},
		{"overwrite other workspace's commit", "write", map[string]string{"path": filepath.Join(h.dir, "commits", "ws2", "src", "c-other", "main.sh")}},
		{"overwrite own commit", "write", map[string]string{"path": filepath.Join(commit, "attack.sh")}},
		{"remount own commit writable", "remount", nil},
		{"remount from a nested user namespace", "nested", nil},
		{"worker's environ", "read", map[string]string{"path": "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"}},
		{"any environ with the worker's secrets", "environ", nil},
		{"leave the cgroup", "cgroup", nil},
		{"host root's home", "list", map[string]string{"path": "/root"}},
		{"shadow passwords", "read", map[string]string{"path": "/etc/shadow"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assertHeld(t, h.attack(tc.action, tc.input, spine.Limits{}))
		})
	}
	// The worker itself still reads its own files, and the other
	// workspace's commit is untouched.
	if data, _ := os.ReadFile(filepath.Join(h.dir, "commits", "ws2", "src", "c-other", "main.sh")); !strings.Contains(string(data), "ws2") {
		t.Errorf("the other workspace's commit was changed: %q", data)
	}
}

// TestAttackIdentity: a job is never root nor the worker's uid as the
// host sees it, has no capabilities and no_new_privs, and two running
// jobs have two uids.
func TestAttackIdentity(t *testing.T) {
	t.Parallel()
	eachStart(t, attackIdentity)
}

func attackIdentity(t *testing.T, start attackStart) {
	h := setupAttack(t, start)
	direct := start.direct
	j := h.attack("identity", nil, spine.Limits{})
	var id struct {
		UID, GID int
		Groups   string
		Nested   bool `json:"nested_userns"`
		Status   string
	}
	if j.Status != spine.StatusSuccess || json.Unmarshal(j.Result, &id) != nil {
		t.Fatalf("identity: %s %s %+v", j.Status, j.Result, j.Error)
	}
	// Only a direct start forbids nested user namespaces (bwrap's
	// --disable-userns): this also tells the two starts apart.
	if id.Nested == direct {
		t.Errorf("nested user namespace allowed: %v, want %v", id.Nested, !direct)
	}
	if id.UID == 0 || id.UID == os.Geteuid() || id.GID == 0 || id.Groups != strconv.Itoa(id.GID) {
		t.Errorf("job runs as uid %d gid %d groups %q (worker %d)", id.UID, id.GID, id.Groups, os.Geteuid())
	}
	for _, want := range []string{"NoNewPrivs: 1", "CapEff: 0000000000000000", "CapPrm: 0000000000000000", "CapBnd: 0000000000000000"} {
		if !strings.Contains(id.Status, want) {
			t.Errorf("status lacks %q: %s", want, id.Status)
		}
	}
	// Two running jobs, seen from the host.
	a := h.enqueue(h.attackJob("sleep", `{"seconds":"30"}`, spine.Limits{}))
	b := h.enqueue(h.attackJob("sleep", `{"seconds":"30"}`, spine.Limits{}))
	h.waitLogs(a, "started", 30*time.Second)
	h.waitLogs(b, "started", 30*time.Second)
	ua, ub := hostUIDs(t, newJobTree(a)), hostUIDs(t, newJobTree(b))
	if ua == "" || ub == "" || ua == ub || ua == "0" || ub == "0" {
		t.Errorf("two running jobs' uids as the host sees them: %q and %q", ua, ub)
	}
	cancelJob(t, h.harness, a)
	cancelJob(t, h.harness, b)
}

// hostUIDs is the real uid of the tree's job processes (bwrap's own run
// as the worker: the outer one outside the job, the init without rights).
func hostUIDs(t *testing.T, m jobTree) string {
	t.Helper()
	uids := map[string]bool{}
	for _, pid := range m.members() {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		cmd := procCmdline(pid)
		if strings.Contains(cmd, "bwrap") {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if f, ok := strings.CutPrefix(line, "Uid:"); ok {
				uids[strings.Fields(f)[0]] = true
			}
		}
	}
	if len(uids) != 1 {
		t.Errorf("job processes run as %v, want one uid", uids)
	}
	for u := range uids {
		return u
	}
	return ""
}

// TestAttackOtherJob: a job cannot read a running job's ctx.json (its
// WF_TOKEN), see its /tmp, or kill it.
func TestAttackOtherJob(t *testing.T) {
	t.Parallel()
	eachStart(t, attackOtherJob)
}

func attackOtherJob(t *testing.T, start attackStart) {
	h := setupAttack(t, start)
	victim := h.enqueue(h.attackJob("sleep", `{"seconds":"3"}`, spine.Limits{}))
	h.waitLogs(victim, "started", 30*time.Second)
	// A cold job's WF_TOKEN is in its directory's ctx.json; a warm
	// process's directory holds its wrapper, HOME and /tmp.
	jobs, secret := "jobs", "ctx.json"
	dirs, _ := filepath.Glob(filepath.Join(h.dir, jobs, victim.String()+"-*"))
	if h.warm {
		jobs, secret = "warm", "warm.mjs"
		dirs = h.runner.warmDirs()
	}
	pids := newJobTree(victim).members()
	if len(dirs) != 1 || len(pids) == 0 {
		t.Fatalf("victim's job dir %v, processes %v", dirs, pids)
	}
	var wg sync.WaitGroup
	for _, tc := range []struct {
		action string
		input  map[string]string
	}{
		{"read", map[string]string{"path": filepath.Join(dirs[0], secret)}},
		{"ls", map[string]string{"path": filepath.Join(h.dir, jobs)}}, // only its own
		{"signal", map[string]string{"pid": strconv.Itoa(pids[len(pids)-1])}},
		{"tmp", nil},
		{"tmp", nil},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := h.attack(tc.action, tc.input, spine.Limits{})
			r := assertHeld(t, j)
			if tc.action == "ls" && (strings.Contains(r.Detail, victim.String()) || strings.Contains(r.Detail, filepath.Base(dirs[0])) || len(strings.Fields(r.Detail)) != 1) {
				t.Errorf("a job sees these job directories: %q; want its own alone", r.Detail)
			}
		}()
	}
	wg.Wait()
	if j := h.wait(victim, 30*time.Second); j.Status != spine.StatusSuccess {
		t.Errorf("the victim job ended %s %+v", j.Status, j.Error)
	}
}

// TestAttackLimits: the pids limit holds against a fork loop, memory past
// the limit fails the job with its message, and a daemon that clears its
// environment and setsids does not outlive the job.
func TestAttackLimits(t *testing.T) {
	t.Parallel()
	warmOrCold(t, attackLimits)
}

func attackLimits(t *testing.T, start attackStart) {
	h := setupAttack(t, start)
	j := h.attack("forkbomb", map[string]string{"count": "500"}, spine.Limits{Pids: 40})
	switch {
	case j.Status == spine.StatusSuccess:
		if n := visibleProcesses(t, j); n > 40 {
			t.Errorf("%d processes under a pids limit of 40", n)
		}
	case j.Error == nil || j.Error.Message == "":
		t.Errorf("fork loop: %s without an error", j.Status)
	}
	j = h.attack("memory", map[string]string{"bytes": "2000000000"}, spine.Limits{Memory: 64 << 20})
	if j.Status != spine.StatusFailure || j.Error == nil || j.Error.Message != "out of memory (limit 64MiB)" {
		t.Errorf("2 GB under 64 MiB: %s %+v", j.Status, j.Error)
	}
	// A sleep of a length no other process has, to find it afterwards.
	secs := strconv.Itoa(3000 + int(uuid.New().ID()%100000))
	j = h.attack("daemon", map[string]string{"seconds": secs}, spine.Limits{})
	assertHeld(t, j)
	if left := processesRunning("sleep " + secs); len(left) > 0 {
		t.Errorf("the job's daemon outlived it: %v", left)
	}
}

// visibleProcesses reads the fork loop's count of the processes it saw.
func visibleProcesses(t *testing.T, j spine.Job) int {
	t.Helper()
	var r attackResult
	_ = json.Unmarshal(j.Result, &r)
	n, err := strconv.Atoi(strings.TrimSpace(r.Detail))
	if err != nil || n < 10 {
		t.Fatalf("fork loop reported %q: it did not run", r.Detail)
	}
	return n
}

// processesRunning lists the host's processes whose command line is cmd.
func processesRunning(cmd string) []string {
	var out []string
	for _, pid := range hostPids(func(pid int) bool { return strings.HasSuffix(procCmdline(pid), ":"+cmd) }) {
		out = append(out, procCmdline(pid))
	}
	return out
}

// TestAttackResultFiles: a job that leaves a FIFO, a link to /dev/zero or
// to /etc/shadow in place of its result or error file fails with a clear
// message, at once, and the worker goes on serving jobs.
// A warm job has no result or error file (its answer comes over a pipe,
// bounded the same way: TestWarmConformance, TestWarmForgedAnswer), so
// this attack runs cold only.
func TestAttackResultFiles(t *testing.T) {
	t.Parallel()
	h := setupAttack(t, attackStart{direct: true})
	for _, tc := range []struct {
		action, want string
		input        map[string]string
	}{
		{"fifo", "error.json is not a regular file (a FIFO)", nil},
		{"fifo-result", "result.json is not a regular file (a FIFO)", nil},
		{"zero", "result.json is a symbolic link", nil},
		{"link", "result.json is a symbolic link", map[string]string{"path": "/etc/shadow"}},
	} {
		t.Run(tc.action, func(t *testing.T) {
			t.Parallel()
			j := h.attack(tc.action, tc.input, spine.Limits{})
			if j.Status != spine.StatusFailure || j.Error == nil || !strings.Contains(j.Error.Message, tc.want) {
				t.Errorf("%s: %s %+v, want a failure saying %q", tc.action, j.Status, j.Error, tc.want)
			}
		})
	}
	t.Cleanup(func() {
		if j := h.attack("identity", nil, spine.Limits{}); j.Status != spine.StatusSuccess {
			t.Errorf("the worker no longer serves jobs: %s %+v", j.Status, j.Error)
		}
	})
}
