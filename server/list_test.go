package server_test

import (
	"net/http"
	"net/url"
	"sort"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// listIDs lists jobs with query q and returns the ids in the answered
// order and the next cursor ("" for null).
func (e *env) listIDs(q string) ([]string, string) {
	e.t.Helper()
	out := e.call("GET", "/api/w/ws/jobs?"+q, adminToken, "").want(http.StatusOK).obj()
	jobs, ok := out["jobs"].([]any)
	if !ok {
		e.t.Fatalf("list %q: jobs is %T, want an array: %v", q, out["jobs"], out)
	}
	ids := []string{}
	var prev time.Time
	for i, j := range jobs {
		job := j.(map[string]any)
		ids = append(ids, job["id"].(string))
		at, err := time.Parse(time.RFC3339Nano, job["created_at"].(string))
		if err != nil {
			e.t.Fatal(err)
		}
		if i > 0 && at.After(prev) {
			e.t.Fatalf("list %q is not newest first: %v after %v", q, at, prev)
		}
		prev = at
	}
	next, has := out["next_cursor"]
	if !has {
		e.t.Fatalf("list %q has no next_cursor: %v", q, out)
	}
	cursor, _ := next.(string)
	return ids, cursor
}

func sameSet(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	g, w := append([]string{}, got...), append([]string{}, want...)
	sort.Strings(g)
	sort.Strings(w)
	if len(g) != len(w) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

// TestListJobs lists through the API: each filter, statuses from the
// queue and from finished jobs, cursor paging, counts, workspace
// isolation, and a 400 naming the parameter for every bad value.
func TestListJobs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		run := func(action, input string, hdr ...string) string {
			return e.call("POST", "/api/w/ws/jobs/run/hello/"+action, adminToken, input, hdr...).want(201).obj()["id"].(string)
		}
		running := run("greet", `{"name":"a"}`)
		claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "w-1", Tags: []string{spine.DefaultTag}, Limit: 1})
		if err != nil || len(claimed) != 1 || claimed[0].ID.String() != running {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		canceled := run("greet", `{"name":"b"}`)
		e.call("POST", "/api/w/ws/jobs/"+canceled+"/cancel", adminToken, `{}`).want(200)
		cli := run("greet", `{"name":"c"}`, "X-Windforce-Trigger", "cli")
		sleep := run("sleep", `{"seconds":1}`)
		queued := []string{cli, sleep}

		all, next := e.listIDs("")
		if next != "" || len(all) != 4 || all[0] != sleep || all[3] != running {
			t.Fatalf("list: %v next %q, want 4 jobs newest first and no cursor", all, next)
		}
		for q, want := range map[string][]string{
			"app=hello&action=sleep":           {sleep},
			"app=hello":                        all,
			"app=other":                        {},
			"action=greet":                     {cli, canceled, running},
			"status=running":                   {running},
			"status=queued":                    queued,
			"status=queued,canceled":           {cli, sleep, canceled},
			"status=queued&status=canceled":    {cli, sleep, canceled},
			"status=success":                   {},
			"status=running,%20canceled":       {running, canceled},
			"trigger=cli":                      {cli},
			"trigger=api&status=queued":        {sleep},
			"tag=default":                      all,
			"tag=gpu":                          {},
			"counts=0&app=hello&action=sleep":  {sleep},
			"status=queued&app=hello&tag=gpu":  {},
			"status=canceled&action=greet":     {canceled},
			"status=running&trigger=schedule":  {},
			"status=failure,success&app=hello": {},
		} {
			got, _ := e.listIDs(q)
			sameSet(t, q, got, want...)
		}

		// Paging two by two visits every job once, newest first.
		var paged []string
		q := "limit=2"
		for pages := 0; ; pages++ {
			if pages > 3 {
				t.Fatalf("paging did not end: %v", paged)
			}
			ids, next := e.listIDs(q)
			paged = append(paged, ids...)
			if next == "" {
				break
			}
			q = "limit=2&cursor=" + url.QueryEscape(next)
		}
		if len(paged) != len(all) {
			t.Fatalf("paged %v, want %v", paged, all)
		}
		for i := range all {
			if paged[i] != all[i] {
				t.Fatalf("paged %v, want %v", paged, all)
			}
		}
		ids, next := e.listIDs("limit=3&status=queued,canceled")
		if len(ids) != 3 || next != "" {
			t.Fatalf("a full last page: %v next %q, want no cursor", ids, next)
		}

		out := e.call("GET", "/api/w/ws/jobs?counts=1&limit=1", adminToken, "").want(http.StatusOK).obj()
		counts, _ := out["counts"].(map[string]any)
		for st, n := range map[string]string{"queued": "2", "running": "1", "canceled": "1", "success": "0", "failure": "0"} {
			if c, ok := counts[st]; !ok || c.(interface{ String() string }).String() != n {
				t.Fatalf("counts %v: %s is %v, want %s", out["counts"], st, counts[st], n)
			}
		}
		if _, has := e.call("GET", "/api/w/ws/jobs", adminToken, "").want(200).obj()["counts"]; has {
			t.Fatal("counts answered without ?counts=1")
		}
		if other := e.call("GET", "/api/w/other/jobs", adminToken, "").want(200).obj()["jobs"].([]any); len(other) != 0 {
			t.Fatalf("another workspace lists %v", other)
		}

		for q, param := range map[string]string{
			"status=done":           "status",
			"status=queued,Running": "status",
			"limit=0":               "limit",
			"limit=501":             "limit",
			"limit=ten":             "limit",
			"limit=-1":              "limit",
			"cursor=%%%":            "",
			"cursor=abc":            "cursor",
			"cursor=" + url.QueryEscape("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"): "cursor",
			"cursor=f_________8AAAAAAAAAAAAAAAAAAAAA":                                   "cursor", // year 294247
			"cursor=gAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA":                                   "cursor", // before year 1
			"trigger=cron": "trigger",
			"app=%00":      "app",
			"tag=%ff":      "tag",
			"action=%00x":  "action",
		} {
			r := e.call("GET", "/api/w/ws/jobs?"+q, adminToken, "")
			if param == "" { // a query Go cannot parse: still a 4xx, never a 5xx
				if r.status != http.StatusBadRequest && r.status != http.StatusOK {
					t.Fatalf("%s answered %d: %s", q, r.status, r.body)
				}
				continue
			}
			if d := r.wantError(http.StatusBadRequest, "bad_request"); d["parameter"] != param {
				t.Fatalf("%s: details %v, want parameter %s", q, d, param)
			}
		}
	})
}
