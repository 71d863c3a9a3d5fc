package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestEventsSinks: `events sinks add` creates a webhook sink and prints
// its generated secret once (list never shows it), a nats sink with its
// subject and types; a refused sink is an error that stores nothing;
// `rm` removes one, and removing it again is an error.
func TestEventsSinks(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		add := e.mustRun("events", "sinks", "add", "--kind", "webhook", "https://example.com/hook", "--id", "billing")
		secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(add.stdout)
		if !strings.Contains(add.stdout, "sink billing added: webhook https://example.com/hook (all events)") || secret == "" {
			t.Fatalf("sinks add printed %q", add.stdout)
		}
		e.mustRun("events", "sinks", "add", "--kind", "nats", "nats://127.0.0.1:4222", "--subject", "acme",
			"--types", "job.succeeded, job.failed", "--id", "bus")
		if r := e.run("events", "sinks", "add", "--kind", "smtp", "smtp://x", "--id", "mail"); r.err == nil ||
			!strings.Contains(r.err.Error(), "kind") {
			t.Fatalf("a bad kind: %v %q", r.err, r.stdout)
		}
		if r := e.run("events", "sinks", "add", "https://example.com"); r.err == nil || ExitCode(r.err) != 2 {
			t.Fatalf("add without --kind: %v", r.err)
		}
		list := e.mustRun("events", "sinks", "list").stdout
		if !regexp.MustCompile(`billing\s+webhook\s+https://example.com/hook\s+-\s+all events\s+true`).MatchString(list) ||
			!regexp.MustCompile(`bus\s+nats\s+nats://127.0.0.1:4222\s+acme\s+job.succeeded,job.failed\s+true`).MatchString(list) ||
			strings.Contains(list, "mail") || strings.Contains(list, secret) {
			t.Fatalf("sinks list:\n%s", list)
		}
		if js := e.mustRun("events", "sinks", "list", "--json").stdout; strings.Contains(js, "whsec_") {
			t.Fatalf("sinks list --json shows a secret: %s", js)
		}
		if out := e.mustRun("events", "sinks", "rm", "bus").stdout; out != "sink bus removed\n" {
			t.Fatalf("rm printed %q", out)
		}
		if r := e.run("events", "sinks", "rm", "bus"); r.err == nil {
			t.Fatal("removing a removed sink succeeded")
		}
		if list := e.mustRun("events", "sinks", "list").stdout; strings.Contains(list, "bus") {
			t.Fatalf("bus still listed:\n%s", list)
		}
	})
}

// TestEventsTail follows a real server from the newest seq: a job
// enqueued then shows as one job.queued line naming it, an earlier one
// does not show; a sync of a new commit pushed to the source's git
// repository shows as one source.synced line with the commit, a sync of a
// bad manifest as one source.sync_failed line with the commit the catalog
// keeps and the error.
func TestEventsTail(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *apiEnv) {
		// A workspace records its events only while it has a sink.
		e.mustRun("events", "sinks", "add", "--kind", "nats", "nats://127.0.0.1:4222", "--id", "bus")
		before := obj(t, e.mustRun("run", "hello/greet", "--input", `{"name":"Before"}`, "--json").stdout)["id"].(string)
		now := e.getJSON("/api/w/" + testWS + "/events?after=now")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := &syncBuffer{}
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, []string{"events", "tail", "--after", strconv.FormatInt(int64(now["next_after"].(float64)), 10),
				"--url", e.url, "--workspace", testWS, "--token", testAdminToken}, out, &syncBuffer{})
		}()
		id := obj(t, e.mustRun("run", "hello/greet", "--input", `{"name":"Ada"}`, "--json").stdout)["id"].(string)
		waitFor(t, "the job.queued line", func() bool { return strings.Contains(out.String(), id) })

		repo := e.api.Repo
		repo.Write(t, map[string]string{"src/extra.ts": "export const x = 1;\n"})
		synced := repo.CommitPush(t, "extra")
		e.mustRun("sources", "sync", "main")
		waitFor(t, "the source.synced line", func() bool { return strings.Contains(out.String(), "source.synced") })
		repo.Write(t, map[string]string{"windforce.yaml": "apps:\n  hello:\n    entrypoint: src/main.ts\n    runtime: cobol\n    actions: {a: {}}\n"})
		repo.CommitPush(t, "bad manifest")
		if r := e.run("sources", "sync", "main"); r.err == nil {
			t.Fatal("a bad manifest synced")
		}
		waitFor(t, "the source.sync_failed line", func() bool { return strings.Contains(out.String(), "source.sync_failed") })
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("tail: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 3 || !strings.Contains(lines[0], "windforce.job.queued") || !strings.Contains(lines[0], id+"  hello/greet  queued") ||
			strings.Contains(out.String(), before) {
			t.Fatalf("tail printed:\n%s", out.String())
		}
		if !strings.Contains(lines[1], "windforce.source.synced") || !strings.Contains(lines[1], "main  "+synced[:10]) ||
			!strings.Contains(lines[2], "windforce.source.sync_failed") || !strings.Contains(lines[2], "main  "+synced[:10]+`  "validate failed at commit`) ||
			!strings.Contains(lines[2], "cobol") {
			t.Fatalf("tail printed for the syncs:\n%s", out.String())
		}
	})
}

// getJSON GETs path from the env's API with the admin token and decodes
// the JSON object it answers.
func (e *apiEnv) getJSON(path string) map[string]any {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), http.MethodGet, e.url+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testAdminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != http.StatusOK {
		e.t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
	return v
}
