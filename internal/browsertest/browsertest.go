// Package browsertest drives headless Chromium from tests through
// chromedp: it finds the browser (skipping loudly when it is missing,
// failing with WINDFORCE_TEST_REQUIRE_BROWSER=1), opens a tab on a server,
// and offers the few steps the console's browser flows use, each bounded
// by a deadline and failing the test with the page's location and text.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/windforce/windforce/internal/testdb"
)

// RequireEnv is the variable that turns a missing browser from a skip
// into a failure (set in CI).
const RequireEnv = "WINDFORCE_TEST_REQUIRE_BROWSER"

// ScreenshotsEnv is the variable that makes Shot write docs/img; ordinary
// runs leave the tree alone.
const ScreenshotsEnv = "WINDFORCE_SCREENSHOTS"

// Chromium finds headless Chromium: $WINDFORCE_CHROMIUM, Debian's
// chromium, or Google Chrome. It skips loudly when none is there, and
// fails instead with WINDFORCE_TEST_REQUIRE_BROWSER=1.
func Chromium(t testing.TB) string {
	t.Helper()
	cands := []string{os.Getenv("WINDFORCE_CHROMIUM"), "chromium", "chromium-browser", "google-chrome", "headless-shell"}
	lastErr := errors.New("no candidate")
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
	testdb.Unavailable(t, RequireEnv, "headless Chromium", lastErr)
	return ""
}

// Tab is one headless Chromium tab on a server. Its steps fail the test
// it is bound to; bind a subtest with For.
type Tab struct {
	t   *testing.T
	ctx context.Context
	url string
}

// NewTab starts headless Chromium (1280×900) and opens a tab whose Open
// paths are relative to baseURL. The browser ends with t.
func NewTab(t *testing.T, baseURL string) *Tab {
	t.Helper()
	path := Chromium(t)
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
	return &Tab{t: t, ctx: ctx, url: strings.TrimSuffix(baseURL, "/")}
}

// For returns the same tab bound to t (a subtest), so a failed step
// fails that subtest.
func (tb *Tab) For(t *testing.T) *Tab {
	c := *tb
	c.t = t
	return &c
}

// Do runs steps within 30 s; a failure fails the test with the page's
// location and text, so a broken flow says where it stood.
func (tb *Tab) Do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	tb.DoWithin(30*time.Second, steps...)
}

// DoWithin runs steps within d, failing the test like Do.
func (tb *Tab) DoWithin(d time.Duration, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("browser: %v\n%s", err, tb.dump())
	}
}

// dump is the current page's location and text, for failure messages.
func (tb *Tab) dump() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	return "at " + loc + ":\n" + text
}

// Text reads the visible text of the element sel, failing when it does
// not appear within 10 s.
func (tb *Tab) Text(sel string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		tb.t.Fatalf("read %s: %v\n%s", sel, err, tb.dump())
	}
	return s
}

// HTML reads the outer HTML of the element sel now ("" when missing).
func (tb *Tab) HTML(sel string) string {
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {outerHTML: ""}).outerHTML`, sel)))
	return s
}

// WaitJS waits up to d until the JavaScript expression expr is true,
// polling again in the new page when a click navigated away.
func (tb *Tab) WaitJS(d time.Duration, expr string) {
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

// WaitText waits up to d until the first element matching sel holds want.
func (tb *Tab) WaitText(d time.Duration, sel, want string) {
	tb.t.Helper()
	tb.WaitJS(d, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.innerText.includes(%q); })()`, sel, want))
}

// Open navigates to path on the tab's server and waits for the body.
func (tb *Tab) Open(path string) {
	tb.t.Helper()
	tb.Do(chromedp.Navigate(tb.url+path), chromedp.WaitReady(chromedp.CSS("body")))
}

// SetJS is a step that sets a control's value from script (selects and
// textareas, which SendKeys handles poorly), waiting up to 5 s for it.
func (tb *Tab) SetJS(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false; e.value = %q; return e.value === %q; })()`,
		sel, value, value), chromedp.WithPollingTimeout(5*time.Second))
}

// Shot saves a screenshot of the whole page to docs/img/console-NAME.png
// in the repository when WINDFORCE_SCREENSHOTS=1, and does nothing
// otherwise (so ordinary runs leave the tree alone).
func (tb *Tab) Shot(name string) {
	tb.t.Helper()
	if os.Getenv(ScreenshotsEnv) != "1" {
		return
	}
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	root, err := repoRoot()
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join(root, "docs", "img")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "console-"+name+".png"), png, 0o644); err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
}

// repoRoot walks up from the working directory (a test's package
// directory) to the directory holding go.mod.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the repository root: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("find the repository root: no go.mod above %s", wd)
		}
	}
}
