package cli

import (
	"regexp"
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
