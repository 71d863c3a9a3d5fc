package e2e_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/windforce/windforce/internal/browsertest"
	"github.com/windforce/windforce/internal/gittest"
)

// TestBrowserFlows drives the console of a real `windforce dev` process
// (its own worker with bun and its scheduler) in headless Chromium: log
// in, run hello/greet through its generated form and see the result, see
// a validation error next to its field, cancel a running hello/sleep, see
// a failed job and reopen it, filter runs, sync a source, create a
// schedule and see it fire, and read queue health, also at phone width.
// With WINDFORCE_SCREENSHOTS=1 it refreshes docs/img/console-*.png.
func TestBrowserFlows(t *testing.T) {
	t.Parallel()
	browsertest.Chromium(t)
	d := startDev(t, filepath.Join(t.TempDir(), "state"))
	tb := browsertest.NewTab(t, d.url)
	login(tb, d.token)
	tb.Shot("runs-empty")
	a := d.api(t)

	t.Run("keyboard: skip link first, focus visible", func(t *testing.T) { flowKeyboard(tb.For(t)) })
	t.Run("run greet through its form", func(t *testing.T) { flowGreet(t, tb.For(t)) })
	t.Run("validation error next to the field", func(t *testing.T) { flowValidation(t, tb.For(t), a.with(t)) })
	t.Run("cancel a running sleep", func(t *testing.T) { flowCancel(tb.For(t)) })
	t.Run("a failed job shows its error and reopens", func(t *testing.T) { flowFailed(tb.For(t)) })
	t.Run("filter runs", func(t *testing.T) { flowFilter(t, tb.For(t)) })
	t.Run("job detail", func(t *testing.T) { flowJobDetail(tb.For(t)) })
	t.Run("sync a source", func(t *testing.T) { flowSync(t, tb.For(t), a.with(t)) })
	t.Run("create a schedule and see it fire", func(t *testing.T) { flowSchedule(t, tb.For(t), a.with(t)) })
	t.Run("queue health", func(t *testing.T) { flowHealth(tb.For(t)) })
	t.Run("phone width", func(t *testing.T) { flowPhone(tb.For(t)) })
}

// with is the same client failing t (a subtest).
func (a api) with(t *testing.T) api {
	a.t = t
	return a
}

// login logs in through the form with token.
func login(tb *browsertest.Tab, token string) {
	tb.Open("/")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#token")))
	tb.Shot("login")
	tb.Do(chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Submit(chromedp.CSS("#token")))
	tb.WaitText(10*time.Second, "h1", "Runs")
}

func flowKeyboard(tb *browsertest.Tab) {
	tb.Open("/w/default/runs")
	tb.Do(chromedp.KeyEvent("\t"))
	tb.WaitJS(5*time.Second, `document.activeElement && document.activeElement.classList.contains('skip') &&
		getComputedStyle(document.activeElement).left !== '-999px'`)
	tb.Do(chromedp.KeyEvent("\r"))
	tb.WaitJS(5*time.Second, `location.hash === '#main'`)
}

func flowGreet(t *testing.T, tb *browsertest.Tab) {
	tb.Open("/w/default/apps/hello/greet")
	tb.Do(chromedp.WaitVisible(chromedp.CSS(`[name="/name"]`)), chromedp.SendKeys(chromedp.CSS(`[name="/name"]`), "Ada"))
	tb.Do(chromedp.Click(chromedp.CSS("#run-button")))
	// The new run joins the page's recent runs at once.
	tb.WaitJS(10*time.Second, `document.querySelectorAll('#recent-runs li').length === 1`)
	// The result shows inline when the job finishes within about 5 s; on
	// a slow machine the page links to the job instead.
	tb.WaitJS(30*time.Second, `!!document.querySelector('#run-result') ||
		!!document.querySelector('#outcome:not([hx-get])')`)
	if !strings.Contains(tb.HTML("#run-result"), "Hello, Ada!") {
		t.Logf("the result was not inline within 5 s; following the job link")
		tb.Do(chromedp.Click(chromedp.CSS("#outcome a")))
		tb.WaitText(30*time.Second, "#result", "Hello, Ada!")
		return
	}
	// The recent runs refresh while one is live, until it shows finished.
	tb.WaitText(15*time.Second, "#recent-runs", "success")
	tb.Shot("action")
}

func flowValidation(t *testing.T, tb *browsertest.Tab, a api) {
	tb.Open("/w/default/apps/hello/sleep")
	tb.Do(chromedp.WaitVisible(chromedp.CSS(`[name="/seconds"]`)), chromedp.SendKeys(chromedp.CSS(`[name="/seconds"]`), "99999"))
	tb.Do(chromedp.Click(chromedp.CSS("#run-button")))
	// The message sits in the field's own block, and the field is marked
	// invalid (by the client-side check or the server's 422).
	tb.WaitJS(15*time.Second, `(() => {
		const f = document.querySelector('[name="/seconds"]');
		const box = f && f.closest('[data-sf-field]');
		const err = box && box.querySelector('.sf-error:not([hidden])');
		return f.getAttribute('aria-invalid') === 'true' && !!err && err.innerText.trim().length > 0;
	})()`)
	tb.Shot("validation")
	if n := countJobs(a, "sleep"); n != 0 {
		t.Fatalf("%d sleep jobs after a refused form", n)
	}
}

// countJobs counts the workspace's jobs of one hello action via the API.
func countJobs(a api, action string) int {
	a.t.Helper()
	out := a.do("GET", "/api/w/default/jobs?app=hello&action="+action+"&limit=100", "").want(a.t, http.StatusOK)
	return len(out["jobs"].([]any))
}

func flowCancel(tb *browsertest.Tab) {
	tb.Open("/w/default/apps/hello/sleep")
	tb.Do(chromedp.WaitVisible(chromedp.CSS(`[name="/seconds"]`)), chromedp.SetValue(chromedp.CSS(`[name="/seconds"]`), "300"))
	tb.Do(chromedp.Click(chromedp.CSS("#run-button")))
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#outcome a")), chromedp.Click(chromedp.CSS("#outcome a")))
	tb.WaitText(30*time.Second, ".job-status", "running")
	tb.WaitText(15*time.Second, "#logs", "sleeping 300s")
	tb.Shot("job-running")
	tb.Do(chromedp.Click(chromedp.CSS("button.danger")))
	tb.WaitText(30*time.Second, ".job-status", "canceled")
	tb.WaitText(10*time.Second, ".timeline", "finished canceled")
}

func flowFailed(tb *browsertest.Tab) {
	tb.Open("/w/default/apps/hello/fail")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#run-button")), chromedp.Click(chromedp.CSS("#run-button")))
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#outcome a")), chromedp.Click(chromedp.CSS("#outcome a")))
	tb.WaitText(30*time.Second, ".job-status", "failure")
	tb.WaitText(5*time.Second, ".error-section", "failing on purpose")
	tb.WaitText(5*time.Second, ".timeline", "attempt 2 of 2 (1 earlier attempt(s) failed)")
	tb.Shot("job-failed")
	tb.Do(chromedp.SendKeys(chromedp.CSS("#reopen-reason"), "retry after fix"), chromedp.Submit(chromedp.CSS("#reopen-reason")))
	tb.WaitText(10*time.Second, ".timeline", "retry after fix")
	tb.WaitText(30*time.Second, ".job-status", "failure")
}

func flowFilter(t *testing.T, tb *browsertest.Tab) {
	tb.Open("/w/default/runs")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#f-status")), chromedp.SetValue(chromedp.CSS("#f-status"), "canceled"),
		chromedp.Click(chromedp.CSS(".filters button[type=submit]")))
	tb.WaitJS(10*time.Second, `location.search.includes('status=canceled')`)
	tb.WaitText(10*time.Second, "table.runs", "hello/sleep")
	if txt := tb.Text("table.runs tbody"); strings.Contains(txt, "success") || strings.Contains(txt, "greet") {
		t.Fatalf("status filter kept other jobs:\n%s", txt)
	}
	tb.Open("/w/default/runs")
	tb.WaitText(10*time.Second, "table.runs", "hello/greet")
	tb.Shot("runs")
}

func flowJobDetail(tb *browsertest.Tab) {
	tb.Open("/w/default/runs?action=greet")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("table.runs tbody a")), chromedp.Click(chromedp.CSS("table.runs tbody td:nth-child(2) a")))
	tb.WaitText(10*time.Second, "#result", "Hello, Ada!")
	tb.WaitText(10*time.Second, "#logs", "greeting Ada")
	tb.Shot("job")
}

// extraSource pushes examples/hello as app "extra" (so its key does not
// clash with dev's hello) to a new git repository, adds it as source
// "extra" through the API and syncs it; it returns the repository and
// its manifest.
func extraSource(t *testing.T, a api) (*gittest.Repo, string) {
	t.Helper()
	hello, err := os.ReadFile(filepath.Join(gittest.Example("hello"), "windforce.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	manifest := strings.Replace(string(hello), "\n  hello:\n", "\n  extra:\n", 1)
	if manifest == string(hello) {
		t.Fatalf("examples/hello/windforce.yaml declares no app hello:\n%s", hello)
	}
	repo := gittest.New(t)
	repo.CopyDir(t, gittest.Example("hello"))
	repo.Write(t, map[string]string{"windforce.yaml": manifest})
	repo.CommitPush(t, "extra example")
	body := string(mustJSON(t, map[string]string{"id": "extra", "url": repo.URL, "branch": "main"}))
	a.do("POST", "/api/w/default/sources", body).want(t, http.StatusCreated)
	a.do("POST", "/api/w/default/sources/extra/sync", "").want(t, http.StatusOK)
	return repo, manifest
}

func flowSync(t *testing.T, tb *browsertest.Tab, a api) {
	repo, manifest := extraSource(t, a)
	repo.Write(t, map[string]string{"windforce.yaml": "apps:\n  extra:\n    entrypoint: src/missing.ts\n    runtime: bun\n"})
	repo.CommitPush(t, "break the manifest")
	tb.Open("/w/default/sources")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#sync-extra")), chromedp.Click(chromedp.CSS("#sync-extra")))
	tb.WaitText(30*time.Second, "#sync-flash", "Sync of extra failed")
	tb.WaitText(5*time.Second, `article[aria-labelledby="src-extra"]`, "sync failed")
	tb.Shot("sources-error")
	repo.Write(t, map[string]string{"windforce.yaml": manifest, "NOTES.md": "a new commit\n"})
	head := repo.CommitPush(t, "fix the manifest")
	tb.Open("/w/default/sources")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#sync-extra")), chromedp.Click(chromedp.CSS("#sync-extra")))
	tb.WaitText(30*time.Second, "#sync-flash", "Synced extra at "+head[:10])
	tb.WaitText(5*time.Second, `article[aria-labelledby="src-extra"]`, "synced")
	tb.Shot("sources")
}

func flowSchedule(t *testing.T, tb *browsertest.Tab, a api) {
	tb.Open("/w/default/schedules")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#s-cron")), tb.SetJS("#s-target", "hello/greet"), tb.SetJS("#s-cron", ""),
		chromedp.SendKeys(chromedp.CSS("#s-cron"), "*/2 * * * * *"), tb.SetJS("#s-input", `{"name":"cron"}`))
	tb.WaitJS(10*time.Second, `document.querySelectorAll('#preview li').length === 5`)
	tb.Shot("schedules-new")
	tb.Do(chromedp.Click(chromedp.CSS("#schedule-form button[type=submit]")))
	tb.WaitText(10*time.Second, ".flash", "Schedule created.")
	waitFired(a, 30*time.Second)
	tb.Open("/w/default/schedules")
	tb.Do(chromedp.WaitVisible(chromedp.CSS(".last-job")))
	tb.Shot("schedules")
	tb.Do(chromedp.Click(chromedp.CSS(".last-job")))
	tb.WaitText(30*time.Second, ".job-status", "success")
	tb.WaitText(5*time.Second, "#result", "Hello, cron!")
	tb.Open("/w/default/schedules")
	tb.Do(chromedp.Click(chromedp.CSS(".row-actions button")))
	tb.WaitText(10*time.Second, "table.schedules", "disabled")
}

// waitFired polls the schedule list until the workspace's one schedule
// has fired (its last_job_id is set).
func waitFired(a api, within time.Duration) {
	a.t.Helper()
	deadline := time.Now().Add(within)
	for {
		out := a.do("GET", "/api/w/default/schedules", "").want(a.t, http.StatusOK)
		l := out["schedules"].([]any)
		if len(l) == 1 && l[0].(map[string]any)["last_job_id"] != nil {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the schedule did not fire within %s: %v", within, l)
		}
		time.Sleep(pollEvery)
	}
}

func flowHealth(tb *browsertest.Tab) {
	tb.Open("/w/default/health")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	tb.WaitText(5*time.Second, ".legend", "success")
	tb.Shot("health")
	tb.Open("/w/default/apps")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("table.actions-table")))
	tb.Shot("apps")
}

func flowPhone(tb *browsertest.Tab) {
	tb.Do(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	tb.Open("/w/default/runs")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("table.runs")))
	tb.Shot("runs-phone")
	tb.Open("/w/default/apps/hello/greet")
	tb.Do(chromedp.WaitVisible(chromedp.CSS(`[name="/name"]`)))
	tb.Shot("action-phone")
}
