package console_test

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/internal/browsertest"
	"github.com/windforce/windforce/internal/gittest"
	"github.com/windforce/windforce/spine"
)

// retag commits hello routed to tag and syncs it through the API.
func (e *env) retag(tag string) {
	e.t.Helper()
	m, err := os.ReadFile(filepath.Join(gittest.Example("hello"), "windforce.yaml"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.repo.Write(e.t, map[string]string{"windforce.yaml": strings.Replace(string(m), "tag: default", "tag: "+tag, 1)})
	e.repo.CommitPush(e.t, "route hello to "+tag)
	e.syncAPI()
}

// syncAPI syncs source "main" through the API.
func (e *env) syncAPI() {
	e.t.Helper()
	req, err := http.NewRequestWithContext(e.t.Context(), "POST", e.url+"/api/w/ws/sources/main/sync", nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(res.Body)
		e.t.Fatalf("sync: %d %s", res.StatusCode, body)
	}
}

// waitingOn lists the workspace's waiting jobs on tag.
func (e *env) waitingOn(tag string) []spine.Job {
	e.t.Helper()
	jobs, err := e.db.ListJobs(e.t.Context(), spine.ListJobsParams{Workspace: ws, Statuses: []spine.Status{spine.StatusQueued},
		Tag: tag, Limit: 100})
	if err != nil {
		e.t.Fatal(err)
	}
	return jobs
}

// TestRequeueInBrowser: on the runs page filtered to hello/greet after
// hello moved to tag gpu, headless Chromium follows "Requeue 2 waiting
// jobs…", sees the jobs on the confirmation, confirms, and reads that
// both moved; they now wait on gpu, the sleep job (not in the filter)
// stays on the old tag.
func TestRequeueInBrowser(t *testing.T) {
	t.Parallel()
	browsertest.Chromium(t)
	e := newSQLiteEnv(t)
	a, b := e.enqueue("greet", `{"name":"Ada"}`), e.enqueue("greet", `{"name":"Bob"}`)
	sleep := e.enqueue("sleep", `{"seconds":1}`)
	e.retag("gpu")

	tb := browsertest.NewTab(t, e.url)
	tb.Open("/login")
	tb.Do(chromedp.WaitVisible(chromedp.CSS("#token")), chromedp.SendKeys(chromedp.CSS("#token"), adminToken),
		chromedp.Submit(chromedp.CSS("#token")))
	tb.WaitText(10*time.Second, "h1", "Runs")
	tb.Open("/w/ws/runs?app=hello&action=greet")
	tb.WaitText(10*time.Second, "#requeue-offer", "Requeue 2 waiting jobs")
	tb.Do(chromedp.Click(chromedp.CSS("#requeue-offer")))
	tb.WaitText(10*time.Second, "h1", "Requeue waiting jobs")
	rows := tb.Text("#requeue-jobs tbody")
	for _, id := range []uuid.UUID{a, b} {
		if !strings.Contains(rows, id.String()[28:]) {
			t.Fatalf("confirmation lacks job %s:\n%s", id, rows)
		}
	}
	if strings.Contains(rows, sleep.String()[28:]) || len(e.waitingOn("gpu")) != 0 {
		t.Fatalf("the confirmation lists the sleep job or something moved before confirming:\n%s", rows)
	}
	tb.Do(chromedp.Click(chromedp.CSS("#requeue-confirm")))
	tb.WaitText(10*time.Second, "#requeue-summary", "2 jobs requeued, 0 skipped")
	moved := e.waitingOn("gpu")
	if len(moved) != 2 || moved[0].Pin.ActionKey != "greet" || moved[1].Pin.ActionKey != "greet" {
		t.Fatalf("waiting on gpu after the requeue: %+v", moved)
	}
	for _, id := range []uuid.UUID{a, b} {
		if j := e.job(id); j.Status != spine.StatusCanceled {
			t.Fatalf("old job %s is %s", id, j.Status)
		}
	}
	if j := e.job(sleep); j.Status != spine.StatusQueued || j.Pin.Tag != "default" {
		t.Fatalf("sleep job after the requeue: %s on %s", j.Status, j.Pin.Tag)
	}
}

// TestRequeueForm: the offer shows only on a filter that may show waiting
// jobs and for a token with the requeue scope; the POST requeues exactly
// the jobs the confirmation named (a job claimed since is skipped with
// why); a form without a filter or ids, or with a bad id, is 400 and
// moves nothing.
func TestRequeueForm(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		// Which of the two a worker claims is the queue's business; the
		// test names them after the claim.
		a, claimed := e.enqueue("greet", `{"name":"Ada"}`), e.enqueue("greet", `{"name":"Cy"}`)
		br := e.browser()
		br.login(adminToken)
		if p := br.get("/w/ws/runs").want(200); strings.Contains(p.body, "requeue-offer") {
			t.Fatal("the unfiltered runs page offers a bulk requeue")
		}
		if p := br.get("/w/ws/runs?action=greet&status=success").want(200); strings.Contains(p.body, "requeue-offer") {
			t.Fatal("a filter of finished jobs offers a bulk requeue")
		}
		br.get("/w/ws/runs?action=greet").want(200).contains("Requeue 2 waiting jobs…")
		br.get("/w/ws/runs/requeue?action=greet").want(200).contains(a.String(), claimed.String(), "Requeue 2 waiting jobs")
		br.get("/w/ws/runs/requeue").want(http.StatusBadRequest).contains("Filter the runs")

		// A worker claims one of the confirmed jobs before the POST.
		c, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1})
		if err != nil || len(c) != 1 {
			t.Fatalf("claim: %v %v", c, err)
		}
		if c[0].ID == a {
			a, claimed = claimed, a
		}
		before := e.count()
		br.post("/w/ws/runs/requeue", url.Values{"id": {"nope"}, "action": {"greet"}}).want(http.StatusBadRequest)
		br.post("/w/ws/runs/requeue", url.Values{"action": {"greet"}}).want(http.StatusBadRequest)
		br.post("/w/ws/runs/requeue", url.Values{"id": {a.String()}}).want(http.StatusBadRequest)
		if after := e.count(); after != before {
			t.Fatalf("refused forms wrote: %d jobs, then %d", before, after)
		}
		p := br.post("/w/ws/runs/requeue", url.Values{"id": {a.String(), claimed.String()}, "action": {"greet"}}).want(200)
		p.contains("1 job requeued, 1 skipped", "cannot requeue a running job")

		readText, _ := e.newToken(ws, auth.ScopeRead)
		rd := e.browser()
		rd.login(readText)
		if p := rd.get("/w/ws/runs?action=greet").want(200); strings.Contains(p.body, "requeue-offer") {
			t.Fatal("a read token is offered a bulk requeue")
		}
		rd.get("/w/ws/runs/requeue?action=greet").want(http.StatusForbidden)
		rd.post("/w/ws/runs/requeue", url.Values{"id": {claimed.String()}, "action": {"greet"}}).want(http.StatusForbidden)
	})
}
