package console_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/internal/browsertest"
	"github.com/windforce/windforce/internal/gittest"
)

// head is the commit at the remote's branch main.
func (e *env) head() string {
	e.t.Helper()
	return gittest.Git(e.t, e.repo.Bare, "rev-parse", "main")
}

// appCommit is the commit the catalog holds for hello.
func (e *env) appCommit() string {
	e.t.Helper()
	app, err := e.db.GetApp(e.t.Context(), ws, "hello")
	if err != nil {
		e.t.Fatal(err)
	}
	return app.CommitSHA
}

// pushMeanwhile pushes a commit to main from outside windforce (the
// working copy first catches up with what the console pushed).
func (e *env) pushMeanwhile(files map[string]string) string {
	e.t.Helper()
	gittest.Git(e.t, e.repo.Work, "fetch", "-q", "origin", "main")
	gittest.Git(e.t, e.repo.Work, "reset", "-q", "--hard", "FETCH_HEAD")
	e.repo.Write(e.t, files)
	return e.repo.CommitPush(e.t, "pushed from a laptop")
}

// TestDeployFromConsoleInBrowser drives the app page in headless Chromium:
// the files of the app's commit are listed and open in the editor, an edit
// with a message deploys (the remote holds the commit with LF line ends,
// the catalog pins it, the page shows the sync result), a broken manifest
// is refused with its reason and the branch unchanged, and a branch that
// moved since the page was opened is refused without a push.
func TestDeployFromConsoleInBrowser(t *testing.T) {
	t.Parallel()
	browsertest.Chromium(t)
	e := newSQLiteEnv(t)
	tb := browsertest.NewTab(t, e.url)
	tb.Open("/login")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), adminToken),
		chromedp.Submit(chromedp.CSS("#token")))
	tb.WaitText(10*time.Second, "h1", "Runs")

	t.Run("view files", func(t *testing.T) {
		tb := tb.For(t)
		tb.Open("/w/ws/apps")
		tb.Do(chromedp.Click(chromedp.CSS(`a[href="/w/ws/apps/hello"]`)))
		tb.WaitText(10*time.Second, "#files", "windforce.yaml")
		for _, f := range []string{"src/main.ts", "schemas/greet.input.json", "README.md"} {
			tb.WaitText(time.Second, "#files", f)
		}
		if got := tb.Text("#app-commit"); !strings.HasPrefix(e.appCommit(), got) {
			t.Fatalf("page shows commit %q, catalog holds %s", got, e.appCommit())
		}
		tb.Do(chromedp.Click(chromedp.CSS(`a[href="/w/ws/apps/hello?file=src%2fmain.ts"]`)))
		tb.WaitText(10*time.Second, "#edit-h", "Edit src/main.ts")
		want, err := os.ReadFile(filepath.Join(gittest.Example("hello"), "src", "main.ts"))
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(string(want))
		if err != nil {
			t.Fatal(err)
		}
		// The editor holds the file exactly, its first line end included.
		tb.WaitJS(5*time.Second, `document.querySelector('#deploy-content').value === `+string(js))
	})

	t.Run("edit and deploy", func(t *testing.T) {
		tb := tb.For(t)
		before := e.head()
		tb.Open("/w/ws/apps/hello?file=README.md")
		tb.Do(tb.SetJS("#deploy-content", "# hello\n\nEdited in the console.\n"),
			chromedp.SendKeys(chromedp.CSS("#deploy-message"), "README: say where it was edited"),
			chromedp.Click(chromedp.CSS("#deploy-button")))
		tb.WaitText(30*time.Second, "#deploy-flash", "Deployed README.md as commit")
		head := e.head()
		if head == before || e.appCommit() != head {
			t.Fatalf("remote head %s (was %s), catalog at %s", head, before, e.appCommit())
		}
		if got := tb.Text("#deploy-flash"); !strings.Contains(got, head[:10]) || !strings.Contains(got, "hello") {
			t.Fatalf("flash %q does not name commit %.10s and the app", got, head)
		}
		if got := gittest.Git(t, e.repo.Bare, "show", "main:README.md"); got != "# hello\n\nEdited in the console." {
			t.Fatalf("README.md on the remote: %q (want LF line ends)", got)
		}
		if got := gittest.Git(t, e.repo.Bare, "log", "-1", "--format=%s", "main"); got != "README: say where it was edited" {
			t.Fatalf("commit message %q", got)
		}
		tb.WaitText(time.Second, "#app-commit", head[:10])
	})

	t.Run("broken manifest refused, branch unchanged", func(t *testing.T) {
		tb := tb.For(t)
		before := e.head()
		tb.Open("/w/ws/apps/hello?file=windforce.yaml")
		tb.Do(tb.SetJS("#deploy-content", "apps:\n  hello:\n    runtime: cobol\n"),
			chromedp.SendKeys(chromedp.CSS("#deploy-message"), "break it"),
			chromedp.Click(chromedp.CSS("#deploy-button")))
		tb.WaitText(30*time.Second, "#deploy-error", "Nothing was pushed")
		msg := tb.Text("#deploy-error")
		for _, want := range []string{"windforce.yaml", "runtime", "entrypoint"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("refusal %q lacks %q", msg, want)
			}
		}
		if h := e.head(); h != before || e.appCommit() != before {
			t.Fatalf("a refused deploy moved the branch to %s / the catalog to %s (was %s)", h, e.appCommit(), before)
		}
		// The edit is kept for another try.
		tb.WaitJS(5*time.Second, `document.querySelector('#deploy-content').value.includes('runtime: cobol')`)
	})

	t.Run("branch moved meanwhile", func(t *testing.T) {
		tb := tb.For(t)
		tb.Open("/w/ws/apps/hello?file=README.md")
		tb.WaitText(10*time.Second, "#edit-h", "Edit README.md")
		moved := e.pushMeanwhile(map[string]string{"NOTES.md": "from a laptop\n"})
		tb.Do(tb.SetJS("#deploy-content", "overwrite\n"),
			chromedp.SendKeys(chromedp.CSS("#deploy-message"), "stale edit"),
			chromedp.Click(chromedp.CSS("#deploy-button")))
		tb.WaitText(30*time.Second, "#deploy-error", "moved since this form was opened")
		if h := e.head(); h != moved {
			t.Fatalf("a stale deploy moved the branch to %s (was %s)", h, moved)
		}
	})
}

// TestDeployFormRefusals: bad input to the deploy form is refused with a
// clear message and pushes nothing (path leaving the tree, empty message,
// a file over the limit, no change, no CSRF token, no admin scope, an
// unknown file or app); a moved branch or a push the remote refuses is
// 409 and a bad manifest 422, each with the branch where it was; a good
// one deploys with LF line ends.
func TestDeployFormRefusals(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		b.get("/w/ws/apps/hello").want(200).contains("windforce.yaml", "src/main.ts", `id="deploy-form"`)
		b.get("/w/ws/apps/hello?file=README.md").want(200).contains("Edit <code>README.md</code>")
		b.get("/w/ws/apps/hello?file=nope.txt").want(http.StatusNotFound).contains("No file")
		b.get("/w/ws/apps/nope").want(http.StatusNotFound)

		base := e.appCommit()
		form := func(p, content, msg string) url.Values {
			return url.Values{"path": {p}, "content": {content}, "message": {msg}, "base": {base}}
		}
		big := strings.Repeat("a", 1<<20+1)
		readme := gittest.Git(t, e.repo.Bare, "show", "main:README.md") + "\n"
		for _, c := range []struct {
			form   url.Values
			status int
			want   string
		}{
			{form("../escape.txt", "x", "m"), http.StatusBadRequest, "inside the repository"},
			{form("/etc/passwd", "x", "m"), http.StatusBadRequest, "inside the repository"},
			{form(".git/config", "x", "m"), http.StatusBadRequest, "inside the repository"},
			{form("a/../b", "x", "m"), http.StatusBadRequest, "inside the repository"},
			{form("", "x", "m"), http.StatusBadRequest, "path"},
			{form("new.txt", "x", "  "), http.StatusBadRequest, "commit message"},
			{form("new.txt", big, "m"), http.StatusRequestEntityTooLarge, "over the limit"},
			{form("README.md", readme, "m"), http.StatusBadRequest, "unchanged"},
			{url.Values{"path": {"new.txt"}, "content": {"x"}, "message": {"m"}}, http.StatusBadRequest, "which commit"},
		} {
			p := b.post("/w/ws/apps/hello/deploy", c.form).want(c.status).contains(c.want)
			if !strings.Contains(p.body, `id="deploy-error"`) {
				t.Fatalf("refusal of %v is not on the app page:\n%s", c.form, p.body)
			}
		}
		b.do("POST", "/w/ws/apps/hello/deploy", form("new.txt", "x", "m")).want(http.StatusForbidden).contains("CSRF")
		b.post("/w/ws/apps/nope/deploy", form("new.txt", "x", "m")).want(http.StatusNotFound)

		reader := e.browser()
		text, _ := e.newToken(ws, auth.ScopeRead, auth.ScopeRun, auth.ScopeOperator)
		reader.login(text)
		p := reader.get("/w/ws/apps/hello?file=README.md").want(200).contains(`id="file-content"`, "admin scope")
		if strings.Contains(p.body, `id="deploy-form"`) {
			t.Fatal("a token without admin scope is offered the deploy form")
		}
		reader.post("/w/ws/apps/hello/deploy", form("new.txt", "x", "m")).want(http.StatusForbidden).contains("admin")
		if h := e.head(); h != base {
			t.Fatalf("refused deploys moved the branch to %s (was %s)", h, base)
		}

		b.post("/w/ws/apps/hello/deploy", form("windforce.yaml", "apps: [\n", "break")).
			want(http.StatusUnprocessableEntity).contains("Nothing was pushed", "windforce.yaml")
		if h := e.head(); h != base {
			t.Fatalf("a bad manifest moved the branch to %s", h)
		}
		src, err := e.db.GetSource(t.Context(), ws, "main")
		if err != nil || src.Error != "" {
			t.Fatalf("source after a deploy refused before its push: %v, error %q", err, src.Error)
		}

		b.post("/w/ws/apps/hello/deploy", form("docs/new.md", "one\r\ntwo\r\n", "add docs")).
			want(200).contains("Deployed docs/new.md as commit", "Edit <code>docs/new.md</code>")
		head := e.head()
		if got := gittest.Git(t, e.repo.Bare, "show", "main:docs/new.md"); got != "one\ntwo" || e.appCommit() != head {
			t.Fatalf("docs/new.md on the remote %q, catalog at %s, head %s", got, e.appCommit(), head)
		}
		if got := gittest.Git(t, e.repo.Bare, "log", "-1", "--format=%an", "main"); got == "" || got == "windforce" {
			t.Fatalf("commit author %q: want the console user", got)
		}

		moved := e.pushMeanwhile(map[string]string{"NOTES.md": "meanwhile\n"})
		base = head
		b.post("/w/ws/apps/hello/deploy", form("docs/new.md", "three\n", "stale")).
			want(http.StatusConflict).contains("moved since this form was opened", moved[:12])
		if h := e.head(); h != moved {
			t.Fatalf("a stale deploy moved the branch to %s (was %s)", h, moved)
		}

		hook := filepath.Join(e.repo.Bare, "hooks", "pre-receive")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'frozen for the release' >&2\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		base = moved
		b.post("/w/ws/apps/hello/deploy", form("docs/new.md", "three\n", "frozen")).
			want(http.StatusConflict).contains("refused the push", "frozen for the release")
		if h := e.head(); h != moved {
			t.Fatalf("a refused push moved the branch to %s (was %s)", h, moved)
		}
	})
}
