package e2e_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/internal/testdb"
)

// The cluster test's repository: examples/hello plus an app whose action
// enqueues a child job with its WF_TOKEN.
const clusterManifest = `apps:
  hello:
    entrypoint: src/main.ts
    runtime: bun
    actions:
      greet: { input_schema: schemas/greet.input.json }
      sleep: { input_schema: schemas/sleep.input.json }
      fail: { input_schema: schemas/fail.input.json }
  family:
    entrypoint: family/main.ts
    runtime: bun
    actions:
      spawn: { input_schema: schemas/greet.input.json }
`

const familyMain = `export default async function main(input: { name: string }, ctx: { action: string }) {
  const url = process.env.WINDFORCE_URL + "/api/w/" + process.env.WF_WORKSPACE + "/jobs/run/hello/greet";
  const res = await fetch(url, { method: "POST", headers: { Authorization: "Bearer " + process.env.WF_TOKEN },
    body: JSON.stringify({ name: input.name }) });
  if (res.status !== 201) throw new Error("child enqueue answered " + res.status + ": " + (await res.text()));
  return { child: (await res.json()).id };
}
`

// cluster is two `windforce server` and two `windforce worker` processes
// on one fresh Postgres database.
type cluster struct {
	servers []api
}

// startCluster migrates a fresh database and starts 2 servers and 2
// workers against it, all with short spine timings.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	bun := requireBun(t)
	db := testdb.PostgresDatabase(t)
	common := []string{"WINDFORCE_DATABASE_URL=" + db, "WINDFORCE_OBJECT_CACHE=postgres",
		"WINDFORCE_SECRET=cluster-secret-0123456789abcdefghij", "WINDFORCE_ADMIN_TOKEN=cluster-admin-0123456789abcdefghi", "WINDFORCE_FILE_SOURCES=" + os.TempDir()}
	if r := cliEnv(t, common, "migrate"); r.code != 0 {
		t.Fatalf("migrate: %s", r.stderr)
	}
	c := &cluster{}
	for range 2 {
		p := start(t, common, "server", "--listen", "127.0.0.1:0", "--sync-interval", "0")
		url := p.line(t, "windforce server listening on ")
		c.servers = append(c.servers, api{t: t, url: url, token: "cluster-admin-0123456789abcdefghi"})
	}
	for i := range 2 {
		dir := t.TempDir()
		t.Cleanup(func() { unseal(dir) })
		p := start(t, append(common, "WINDFORCE_URL="+c.servers[i].url, "PATH="+pathWith(bun)),
			"worker", "--dir", dir, "--concurrency", "2", "--heartbeat", "200ms")
		p.line(t, "worker ")
	}
	return c
}

// TestClusterOnPostgres drives two servers and two workers on one
// Postgres only through HTTP and the CLI: sync through one server, run
// through the other, child jobs with WF_TOKEN, jobs spread over both
// workers, and a schedule firing every second that no tick fires twice.
func TestClusterOnPostgres(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	a, b := c.servers[0], c.servers[1]
	repo := gittest.New(t)
	repo.CopyDir(t, gittest.Example("hello"))
	repo.Write(t, map[string]string{"windforce.yaml": clusterManifest, "family/main.ts": familyMain})
	commit := repo.CommitPush(t, "hello + family")
	a.do("POST", "/api/w/ws/sources", `{"id":"main","url":"`+repo.URL+`","branch":"main"}`).want(t, http.StatusCreated)
	if r := cli(t, a.url, a.token, "sources", "sync", "main", "--workspace", "ws"); r.code != 0 || !strings.Contains(r.stdout, commit[:10]) {
		t.Fatalf("sources sync: exit %d %s %s", r.code, r.stdout, r.stderr)
	}

	t.Run("run through the other server", func(t *testing.T) {
		out := b.do("POST", "/api/w/ws/jobs/run/hello/greet?wait=60s", `{"name":"Ada"}`).want(t, http.StatusOK)
		if out["status"] != "success" || !strings.Contains(string(mustJSON(t, out["result"])), "Hello, Ada!") {
			t.Fatalf("run: %v", out)
		}
	})
	t.Run("jobs spread over both workers", func(t *testing.T) {
		var ids []string
		for range 4 {
			ids = append(ids, b.do("POST", "/api/w/ws/jobs/run/hello/sleep", `{"seconds":1}`).want(t, http.StatusCreated)["id"].(string))
		}
		workers := map[any]bool{}
		for _, id := range ids {
			workers[a.waitStatus("ws", id, 60*time.Second, "success")["worker"]] = true
		}
		if len(workers) != 2 {
			t.Fatalf("4 one-second jobs on 2 workers of concurrency 2 ran on %v", workers)
		}
	})
	t.Run("child job with WF_TOKEN", func(t *testing.T) {
		out := a.do("POST", "/api/w/ws/jobs/run/family/spawn?wait=60s", `{"name":"Kid"}`).want(t, http.StatusOK)
		if out["status"] != "success" {
			t.Fatalf("spawn: %v", out)
		}
		child := out["result"].(map[string]any)["child"].(string)
		j := a.waitStatus("ws", child, 60*time.Second, "success")
		if j["trigger_kind"] != "child" || j["app"] != "hello" {
			t.Fatalf("child job %v", j)
		}
	})
	t.Run("schedule fires each tick once with two servers", func(t *testing.T) {
		testScheduleOnce(t, a)
	})
}

// testScheduleOnce creates an every-second schedule, lets both servers'
// schedulers race over a few ticks, deletes it, and checks the jobs: one
// per tick (distinct trigger_ref: schedule id @ tick), and about as many as seconds passed.
func testScheduleOnce(t *testing.T, a api) {
	s := a.do("POST", "/api/w/ws/schedules", `{"app":"hello","action":"greet","cron":"* * * * * *","input":{"name":"tick"}}`).want(t, http.StatusCreated)
	id := s["id"].(string)
	began := time.Now()
	deadline := began.Add(60 * time.Second)
	var jobs []any
	for len(jobs) < 5 {
		if time.Now().After(deadline) {
			t.Fatalf("%d scheduled jobs after 60s", len(jobs))
		}
		time.Sleep(200 * time.Millisecond)
		jobs = a.do("GET", "/api/w/ws/jobs?trigger=schedule&limit=500", "").want(t, http.StatusOK)["jobs"].([]any)
	}
	a.do("DELETE", "/api/w/ws/schedules/"+id, "")
	elapsed := time.Since(began)
	jobs = a.do("GET", "/api/w/ws/jobs?trigger=schedule&limit=500", "").want(t, http.StatusOK)["jobs"].([]any)
	ticks := map[any]bool{}
	for _, j := range jobs {
		tick := j.(map[string]any)["trigger_ref"] // schedule id @ tick
		if ticks[tick] {
			t.Fatalf("tick %v fired twice: %v", tick, jobs)
		}
		ticks[tick] = true
	}
	if max := int(elapsed/time.Second) + 2; len(jobs) > max {
		t.Fatalf("%d jobs in %v: more than one per tick", len(jobs), elapsed)
	}
}
