package console_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/schedule"
	"github.com/windforce/windforce/spine"
)

// chromiumPath finds headless Chromium: $WINDFORCE_CHROMIUM, Debian's
// chromium, or Google Chrome. It skips loudly when none is there, and
// fails instead with WINDFORCE_TEST_REQUIRE_BROWSER=1 (CI).
func chromiumPath(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv("WINDFORCE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "headless-shell"}
	var lastErr error
	for _, c := range cands {
		if c == "" {
			continue
		}
		p, err := exec.LookPath(c)
		if err == nil {
			return p
		}
		lastErr = err
	}
	testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_BROWSER", "headless Chromium", lastErr)
	return ""
}

// startWorker runs a runner-backed worker with bun in-process on e's
// store and cache, heartbeating fast so a cancel is seen quickly. It skips
// loudly without bun (fails with WINDFORCE_TEST_REQUIRE_BUN=1).
func (e *env) startWorker(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bun"); err != nil {
		testdb.Unavailable(t, "WINDFORCE_TEST_REQUIRE_BUN", "bun", err)
	}
	log := slog.New(slog.DiscardHandler)
	r, err := runner.New(runner.Config{Store: e.db, Cache: e.cache, Dir: filepath.Join(t.TempDir(), "wf"),
		KillGrace: time.Second, MaxResultBytes: 1 << 20, MaxLogBytes: 1 << 20, Secret: secret, URL: e.url, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	w, err := spine.NewWorker(spine.WorkerConfig{Store: e.db, Handler: r.Handle, Name: "browser-worker",
		Tags: []string{spine.DefaultTag}, Concurrency: 4, Heartbeat: 300 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}

// startScheduler fires due schedule ticks through the one enqueue path.
func (e *env) startScheduler(t *testing.T) {
	t.Helper()
	s := &schedule.Scheduler{Store: e.db, Interval: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
}

// tab is one headless Chromium tab on the console.
type tab struct {
	t   *testing.T
	ctx context.Context
	url string
}

// newTab starts headless Chromium (1280 px wide) and opens a tab.
func newTab(t *testing.T, base string) *tab {
	t.Helper()
	path := chromiumPath(t)
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	opts = append(opts, chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		_ = chromedp.Cancel(ctx)
		cancel()
		cancelAlloc()
	})
	// The first action starts the browser; it must run on the tab's own
	// context, not a derived one whose deadline would end the browser.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("start headless Chromium at %s: %v", path, err)
	}
	tb := &tab{t: t, ctx: ctx, url: base}
	return tb
}

// do runs steps with a deadline; a failure fails the test with the page's
// location and text, so a broken flow says where it stood.
func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	tb.doWithin(30*time.Second, steps...)
}

func (tb *tab) doWithin(d time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("browser: %v\n%s", err, tb.dump())
	}
}

// dump is the current page's location and text, for failure messages.
func (tb *tab) dump() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return "at " + loc + ":\n" + text
}

// text reads an element's visible text.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		tb.t.Fatalf("read %s: %v\n%s", sel, err, tb.dump())
	}
	return s
}

// waitJS waits until a JavaScript expression is true.
func (tb *tab) waitJS(d time.Duration, expr string) {
	tb.t.Helper()
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		ctx, cancel := context.WithTimeout(tb.ctx, left+5*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(max(left, time.Millisecond))))
		cancel()
		if err == nil {
			return
		}
		// A click that navigates ends the page the poll ran in; poll again
		// in the new page.
		if navigated(err) && time.Now().Before(deadline) {
			continue
		}
		tb.t.Fatalf("browser: waiting for %s: %v\n%s", expr, err, tb.dump())
	}
}

// navigated reports whether err says the page went away under the action.
func navigated(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find context") || strings.Contains(s, "navigated or closed") ||
		strings.Contains(s, "Execution context was destroyed")
}

// waitText waits until the element sel holds want.
func (tb *tab) waitText(d time.Duration, sel, want string) {
	tb.t.Helper()
	tb.waitJS(d, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.innerText.includes(%q); })()`, sel, want))
}

func (tb *tab) open(path string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(tb.url+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// shot saves a screenshot of the whole page to docs/img/console-NAME.png
// when WINDFORCE_SCREENSHOTS=1 (so ordinary runs leave the tree alone).
func (tb *tab) shot(name string) {
	tb.t.Helper()
	if os.Getenv("WINDFORCE_SCREENSHOTS") != "1" {
		return
	}
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "img", "console-"+name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// login logs in through the form.
func (tb *tab) login(token string) {
	tb.t.Helper()
	tb.open("/")
	tb.do(chromedp.WaitVisible(chromedp.CSS("#token")))
	tb.shot("login")
	tb.do(chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Submit(chromedp.CSS("#token")))
	tb.waitText(10*time.Second, "h1", "Runs")
}

// TestBrowserFlows drives the console in headless Chromium against the
// API server with the console mounted, a real bun worker and the
// scheduler, on SQLite: log in, run hello/greet through its generated
// form and see the result, see a validation error next to its field,
// cancel a running hello/sleep, filter runs, sync a source, create a
// schedule and see it fire.
func TestBrowserFlows(t *testing.T) {
	chromiumPath(t)
	e := newSQLiteEnv(t)
	e.startWorker(t)
	e.startScheduler(t)
	tb := newTab(t, e.url)
	tb.login(adminToken)
	tb.shot("runs-empty")

	t.Run("keyboard: skip link first, focus visible", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/runs")
		tb.do(chromedp.KeyEvent("\t"))
		tb.waitJS(5*time.Second, `document.activeElement && document.activeElement.classList.contains('skip') &&
			getComputedStyle(document.activeElement).left !== '-999px'`)
		tb.do(chromedp.KeyEvent("\r"))
		tb.waitJS(5*time.Second, `location.hash === '#main'`)
	})

	t.Run("run greet through its form", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/apps/hello/greet")
		tb.do(chromedp.WaitVisible(chromedp.CSS(`[name="/name"]`)), chromedp.SendKeys(chromedp.CSS(`[name="/name"]`), "Ada"))
		tb.do(chromedp.Click(chromedp.CSS("#run-button")))
		// The result shows inline when the job finishes within about 5 s;
		// on a slow machine the page links to the job instead.
		tb.waitJS(30*time.Second, `!!document.querySelector('#run-result') ||
			!!document.querySelector('#outcome:not([hx-get])')`)
		if !strings.Contains(tb.html("#run-result"), "Hello, Ada!") {
			t.Logf("the result was not inline within 5 s; following the job link")
			tb.do(chromedp.Click(chromedp.CSS("#outcome a")))
			tb.waitText(30*time.Second, "#result", "Hello, Ada!")
			return
		}
		tb.shot("action")
	})

	t.Run("validation error next to the field", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/apps/hello/sleep")
		tb.do(chromedp.WaitVisible(chromedp.CSS(`[name="/seconds"]`)), chromedp.SendKeys(chromedp.CSS(`[name="/seconds"]`), "99999"))
		tb.do(chromedp.Click(chromedp.CSS("#run-button")))
		// The message sits in the field's own block, and the field is
		// marked invalid (by the client-side check or the server's 422).
		tb.waitJS(15*time.Second, `(() => {
			const f = document.querySelector('[name="/seconds"]');
			const box = f && f.closest('[data-sf-field]');
			const err = box && box.querySelector('.sf-error:not([hidden])');
			return f.getAttribute('aria-invalid') === 'true' && !!err && err.innerText.trim().length > 0;
		})()`)
		tb.shot("validation")
		if n := e.countAction("sleep"); n != 0 {
			t.Fatalf("%d sleep jobs after a refused form", n)
		}
	})

	t.Run("cancel a running sleep", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/apps/hello/sleep")
		tb.do(chromedp.WaitVisible(chromedp.CSS(`[name="/seconds"]`)), chromedp.SetValue(chromedp.CSS(`[name="/seconds"]`), "300"))
		tb.do(chromedp.Click(chromedp.CSS("#run-button")))
		tb.do(chromedp.WaitVisible(chromedp.CSS("#outcome a")), chromedp.Click(chromedp.CSS("#outcome a")))
		tb.waitText(30*time.Second, ".job-status", "running")
		tb.waitText(15*time.Second, "#logs", "sleeping 300s")
		tb.shot("job-running")
		tb.do(chromedp.Click(chromedp.CSS("button.danger")))
		tb.waitText(30*time.Second, ".job-status", "canceled")
		tb.waitText(10*time.Second, ".timeline", "finished canceled")
	})

	t.Run("a failed job shows its error and reopens", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/apps/hello/fail")
		tb.do(chromedp.WaitVisible(chromedp.CSS("#run-button")), chromedp.Click(chromedp.CSS("#run-button")))
		tb.do(chromedp.WaitVisible(chromedp.CSS("#outcome a")), chromedp.Click(chromedp.CSS("#outcome a")))
		tb.waitText(30*time.Second, ".job-status", "failure")
		tb.waitText(5*time.Second, ".error-section", "failing on purpose")
		tb.waitText(5*time.Second, ".timeline", "attempt 2 of 2 (1 earlier attempt(s) failed)")
		tb.shot("job-failed")
		tb.do(chromedp.SendKeys(chromedp.CSS("#reopen-reason"), "retry after fix"), chromedp.Submit(chromedp.CSS("#reopen-reason")))
		tb.waitText(10*time.Second, ".timeline", "retry after fix")
		tb.waitText(30*time.Second, ".job-status", "failure")
	})

	t.Run("filter runs", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/runs")
		tb.do(chromedp.WaitVisible(chromedp.CSS("#f-status")), chromedp.SetValue(chromedp.CSS("#f-status"), "canceled"),
			chromedp.Click(chromedp.CSS(".filters button[type=submit]")))
		tb.waitJS(10*time.Second, `location.search.includes('status=canceled')`)
		tb.waitText(10*time.Second, "table.runs", "hello/sleep")
		if txt := tb.text("table.runs tbody"); strings.Contains(txt, "success") || strings.Contains(txt, "greet") {
			t.Fatalf("status filter kept other jobs:\n%s", txt)
		}
		tb.open("/w/ws/runs")
		tb.waitText(10*time.Second, "table.runs", "hello/greet")
		tb.shot("runs")
	})

	t.Run("job detail", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/runs?action=greet")
		tb.do(chromedp.WaitVisible(chromedp.CSS("table.runs tbody a")), chromedp.Click(chromedp.CSS("table.runs tbody td:nth-child(2) a")))
		tb.waitText(10*time.Second, "#result", "Hello, Ada!")
		tb.waitText(10*time.Second, "#logs", "greeting Ada")
		tb.shot("job")
	})

	t.Run("sync a source", func(t *testing.T) {
		tb.t = t
		manifest, err := os.ReadFile(filepath.Join(e.repo.Work, "windforce.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		e.repo.Write(t, map[string]string{"windforce.yaml": "apps:\n  hello:\n    entrypoint: src/missing.ts\n    runtime: bun\n"})
		e.repo.CommitPush(t, "break the manifest")
		tb.open("/w/ws/sources")
		tb.do(chromedp.WaitVisible(chromedp.CSS("#sync-main")), chromedp.Click(chromedp.CSS("#sync-main")))
		tb.waitText(30*time.Second, "#sync-flash", "Sync of main failed")
		tb.waitText(5*time.Second, ".card", "sync failed")
		tb.shot("sources-error")
		e.repo.Write(t, map[string]string{"windforce.yaml": string(manifest), "NOTES.md": "a new commit\n"})
		head := e.repo.CommitPush(t, "fix the manifest")
		tb.open("/w/ws/sources")
		tb.do(chromedp.WaitVisible(chromedp.CSS("#sync-main")), chromedp.Click(chromedp.CSS("#sync-main")))
		tb.waitText(30*time.Second, "#sync-flash", "Synced main at "+head[:10])
		tb.shot("sources")
	})

	t.Run("create a schedule and see it fire", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/schedules")
		tb.do(chromedp.WaitVisible(chromedp.CSS("#s-cron")), tb.setJS("#s-target", "hello/greet"), tb.setJS("#s-cron", ""),
			chromedp.SendKeys(chromedp.CSS("#s-cron"), "*/2 * * * * *"), tb.setJS("#s-input", `{"name":"cron"}`))
		tb.waitJS(10*time.Second, `document.querySelectorAll('#preview li').length === 5`)
		tb.shot("schedules-new")
		tb.do(chromedp.Click(chromedp.CSS("#schedule-form button[type=submit]")))
		tb.waitText(10*time.Second, ".flash", "Schedule created.")
		e.waitFired(t, 30*time.Second)
		tb.open("/w/ws/schedules")
		tb.do(chromedp.WaitVisible(chromedp.CSS(".last-job")))
		tb.shot("schedules")
		tb.do(chromedp.Click(chromedp.CSS(".last-job")))
		tb.waitText(30*time.Second, ".job-status", "success")
		tb.waitText(5*time.Second, "#result", "Hello, cron!")
		tb.open("/w/ws/schedules")
		tb.do(chromedp.Click(chromedp.CSS(".row-actions button")))
		tb.waitText(10*time.Second, "table.schedules", "disabled")
	})

	t.Run("queue health", func(t *testing.T) {
		tb.t = t
		tb.open("/w/ws/health")
		tb.do(chromedp.WaitVisible(chromedp.CSS("svg.chart")))
		tb.waitText(5*time.Second, ".legend", "success")
		tb.shot("health")
		tb.open("/w/ws/apps")
		tb.do(chromedp.WaitVisible(chromedp.CSS("table.actions-table")))
		tb.shot("apps")
	})

	t.Run("phone width", func(t *testing.T) {
		tb.t = t
		tb.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		tb.open("/w/ws/runs")
		tb.do(chromedp.WaitVisible(chromedp.CSS("table.runs")))
		tb.shot("runs-phone")
		tb.open("/w/ws/apps/hello/greet")
		tb.do(chromedp.WaitVisible(chromedp.CSS(`[name="/name"]`)))
		tb.shot("action-phone")
	})
}

// html reads an element's outer HTML ("" when missing).
func (tb *tab) html(sel string) string {
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {outerHTML: ""}).outerHTML`, sel)))
	return s
}

// countAction counts the workspace's jobs of one hello action.
func (e *env) countAction(action string) int {
	e.t.Helper()
	jobs, err := e.db.ListJobs(e.t.Context(), spine.ListJobsParams{Workspace: ws, App: "hello", Action: action, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return len(jobs)
}

// waitFired polls the store until the workspace's schedule has fired.
func (e *env) waitFired(t *testing.T, d time.Duration) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(d)
	for {
		if l := e.schedules(); len(l) == 1 && l[0].LastJobID != nil {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("the schedule did not fire within %s", d)
		case <-tick.C:
		}
	}
}

// setJS sets a control's value from script (selects and textareas).
func (tb *tab) setJS(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.value = %q; return e.value === %q; })()`,
		sel, value, value), chromedp.WithPollingTimeout(5*time.Second))
}
