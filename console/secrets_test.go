package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/internal/browsertest"
	"github.com/windforce/windforce/secrets"
)

// secretsOf is what the workspace holds: its secrets and its audit.
func (e *env) secretsOf() ([]secrets.Secret, []secrets.AuditEntry) {
	e.t.Helper()
	list, err := e.db.ListSecrets(e.t.Context(), ws)
	if err != nil {
		e.t.Fatal(err)
	}
	audit, _, err := e.db.SecretAudit(e.t.Context(), ws, 0, 500)
	if err != nil {
		e.t.Fatal(err)
	}
	return list, audit
}

// TestSecretsPage: an admin sets a secret with the form (created, then
// replaced), sees it listed, deletes it after a confirmation and reads the
// audit; a refused form comes back with the error by its field, the
// name and description kept and no value anywhere; a form without the
// CSRF token stores nothing; a read token sees the list but no form; on
// both databases.
func TestSecretsPage(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		const value = "console-value-8c1f"
		b := e.browser()
		b.login(adminToken)
		b.get("/w/ws/secrets").want(http.StatusOK).contains("No secrets in ws.", `id="secret-form"`, `type="password"`)
		set := func(name, desc, v string) *page {
			return b.post("/w/ws/secrets", url.Values{"name": {name}, "description": {desc}, "value": {v}})
		}
		p := set("DB_PASSWORD", "the reporting database", value)
		if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/w/ws/secrets?done=created") {
			t.Fatalf("set answered %d to %q", p.status, p.location)
		}
		list := b.get(p.location).want(http.StatusOK).contains("Secret created.", "DB_PASSWORD", "the reporting database", "token:admin")
		if strings.Contains(list.body, value) {
			t.Fatal("the secrets page carries the value")
		}
		if p := set("DB_PASSWORD", "", value+"2"); !strings.Contains(p.location, "done=replaced") {
			t.Fatalf("second set answered %d to %q", p.status, p.location)
		}

		for _, c := range []struct {
			name, desc, value, field, msg string
		}{
			{"1BAD", "kept description", value, "s-name-err", "A name is a letter"},
			{"EMPTY", "", "", "s-value-err", "Enter the value."},
			{"NUL", "", value + "\x00", "s-value-err", "without NUL"},
			{"BIG", "", strings.Repeat("v", secrets.MaxValueBytes+1), "s-value-err", "over 65536 bytes"},
			{"DESC", "bell\a", value, "s-desc-err", "control characters"},
		} {
			p := set(c.name, c.desc, c.value).want(http.StatusUnprocessableEntity)
			p.contains(`value="` + c.name + `"`)
			_, after, _ := strings.Cut(p.body, `id="`+c.field+`"><p class="field-error" role="alert">`)
			if msg, _, _ := strings.Cut(after, "</p>"); !strings.Contains(msg, c.msg) {
				t.Fatalf("form %s: error by %s is %q, want %q", c.name, c.field, msg, c.msg)
			}
			if c.value != "" && strings.Contains(p.body, c.value[:len(value)]) {
				t.Fatalf("refused form %s carries the value", c.name)
			}
		}
		p = b.do("POST", "/w/ws/secrets", url.Values{"name": {"NO_CSRF"}, "value": {value}}).want(http.StatusForbidden)
		if list, _ := e.secretsOf(); len(list) != 1 || list[0].Name != "DB_PASSWORD" || list[0].Version != 2 {
			t.Fatalf("after refused forms: %+v", list)
		}

		b.get("/w/ws/secrets/DB_PASSWORD/delete").want(http.StatusOK).contains("Delete secret", "fail when a worker claims them")
		b.get("/w/ws/secrets/NOPE/delete").want(http.StatusNotFound)
		if p := b.post("/w/ws/secrets/DB_PASSWORD/delete", nil); p.status != http.StatusSeeOther || !strings.Contains(p.location, "done=deleted") {
			t.Fatalf("delete answered %d to %q", p.status, p.location)
		}
		b.post("/w/ws/secrets/DB_PASSWORD/delete", nil).want(http.StatusNotFound)
		audit := b.get("/w/ws/secrets/audit").want(http.StatusOK).contains("delete", "replace", "create", "DB_PASSWORD")
		if strings.Contains(audit.body, value) {
			t.Fatal("the audit page carries the value")
		}
		if list, entries := e.secretsOf(); len(list) != 0 || len(entries) != 3 {
			t.Fatalf("after delete: %+v, audit %+v", list, entries)
		}

		set("SHOWN", "", value)
		reader := e.browser()
		readText, _ := e.newToken(ws, auth.ScopeRead)
		reader.login(readText)
		page := reader.get("/w/ws/secrets").want(http.StatusOK).contains("SHOWN")
		if strings.Contains(page.body, `id="secret-form"`) || strings.Contains(page.body, "Delete…") || strings.Contains(page.body, "/secrets/audit") {
			t.Fatal("a read token is offered the set form, delete or the audit")
		}
		reader.post("/w/ws/secrets", url.Values{"name": {"X"}, "value": {"v"}}).want(http.StatusForbidden)
		reader.get("/w/ws/secrets/audit").want(http.StatusForbidden)
	})
}

// TestSecretsPageInBrowser drives the Secrets page in headless Chromium:
// a secret set with the form is listed and its value is in no page
// source, also after a refused submit, whose value field is empty again;
// delete asks first.
func TestSecretsPageInBrowser(t *testing.T) {
	t.Parallel()
	browsertest.Chromium(t)
	e := newSQLiteEnv(t)
	tb := browsertest.NewTab(t, e.url)
	tb.Open("/login")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), adminToken),
		chromedp.Submit(chromedp.CSS("#token")))
	tb.WaitText(10*time.Second, "h1", "Runs")
	const value, refused = "browser-secret-value-5e2a", "refused-secret-value-77b0"
	noValue := func(when string, values ...string) {
		t.Helper()
		src := tb.HTML("html")
		for _, v := range values {
			if src == "" || strings.Contains(src, v) {
				t.Fatalf("%s: the page source carries a value (or is empty)", when)
			}
		}
	}

	tb.Do(chromedp.Click(chromedp.CSS(`nav a[href="/w/ws/secrets"]`)))
	tb.WaitText(10*time.Second, "h1", "Secrets")
	tb.Do(chromedp.SendKeys(chromedp.CSS("#s-name"), "SLACK_TOKEN"),
		chromedp.SendKeys(chromedp.CSS("#s-desc"), "posts to #ops"),
		chromedp.SendKeys(chromedp.CSS("#s-value"), value),
		chromedp.Click(chromedp.CSS(`#secret-form button[type="submit"]`)))
	tb.WaitText(10*time.Second, "#secrets", "SLACK_TOKEN")
	tb.WaitText(time.Second, ".flash", "Secret created.")
	noValue("after set", value)
	if got := tb.Text("#secrets"); !strings.Contains(got, "posts to #ops") || !strings.Contains(got, "token:admin") {
		t.Fatalf("listed %q", got)
	}

	// A name the server refuses: the pattern attribute would stop the
	// browser first, so drop it to send the form as a script could.
	tb.Do(tb.SetJS("#s-name", "9_BAD"), chromedp.Evaluate[chromedp.Void](`document.querySelector('#s-name').removeAttribute('pattern')`),
		chromedp.SendKeys(chromedp.CSS("#s-value"), refused),
		chromedp.Click(chromedp.CSS(`#secret-form button[type="submit"]`)))
	tb.WaitText(10*time.Second, "#s-name-err", "A name is a letter")
	noValue("after a refused submit", value, refused)
	tb.WaitJS(time.Second, `document.querySelector('#s-value').value === '' && document.querySelector('#s-name').value === '9_BAD'`)
	if list, _ := e.secretsOf(); len(list) != 1 {
		t.Fatalf("the refused submit stored: %+v", list)
	}

	tb.Do(chromedp.Click(chromedp.CSS(`a[href="/w/ws/secrets/SLACK_TOKEN/delete"]`)))
	tb.WaitText(10*time.Second, "h1", "Delete secret")
	tb.Do(chromedp.Click(chromedp.CSS("#delete-secret-confirm")))
	tb.WaitText(10*time.Second, ".flash", "Secret deleted.")
	if list, audit := e.secretsOf(); len(list) != 0 || len(audit) != 2 {
		t.Fatalf("after delete: %+v, %+v", list, audit)
	}
}
