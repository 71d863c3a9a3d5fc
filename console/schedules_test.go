package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSchedules: the preview lists the next runs in the zone; a bad
// cron, zone, target or input is shown next to its field and stores
// nothing; a good one is listed and can be disabled, enabled and deleted.
func TestSchedules(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		prev := b.get("/w/ws/schedules/preview?cron=0+9+*+*+1-5&timezone=Europe/Berlin").want(200)
		if n := strings.Count(prev.body, "<li>"); n != 5 {
			t.Fatalf("preview lists %d runs: %s", n, prev.body)
		}
		prev.contains("09:00:00 CE")
		b.get("/w/ws/schedules/preview?cron=nope").want(200).contains("field-error")

		bad := []struct {
			form url.Values
			want string
		}{
			{url.Values{"target": {"hello/greet"}, "cron": {"61 * * * *"}, "input": {`{"name":"a"}`}}, `id="s-cron-err"><p class="field-error"`},
			{url.Values{"target": {"hello/greet"}, "cron": {"* * * * *"}, "timezone": {"Mars/Base"}, "input": {`{"name":"a"}`}}, `id="s-zone-err"><p class="field-error"`},
			{url.Values{"target": {"hello/nope"}, "cron": {"* * * * *"}}, `id="s-target-err"><p class="field-error"`},
			{url.Values{"target": {"hello/greet"}, "cron": {"* * * * *"}, "input": {`{}`}}, `id="s-input-err"><p class="field-error"`},
			{url.Values{"target": {"hello/greet"}, "cron": {"* * * * *"}, "input": {`{`}}, `id="s-input-err"><p class="field-error"`},
		}
		for _, c := range bad {
			b.post("/w/ws/schedules", c.form).want(http.StatusUnprocessableEntity).contains(c.want)
		}
		if l := e.schedules(); len(l) != 0 {
			t.Fatalf("%d schedules after refused forms", len(l))
		}
		p := b.post("/w/ws/schedules", url.Values{"target": {"hello/greet"}, "cron": {"*/5 * * * *"},
			"timezone": {"Europe/Berlin"}, "input": {`{"name":"cron"}`}, "no_overlap": {"1"}})
		if p.status != http.StatusSeeOther {
			t.Fatalf("create answered %d: %s", p.status, p.body)
		}
		l := e.schedules()
		if len(l) != 1 || !l[0].Enabled || !l[0].NoOverlap || l[0].Timezone != "Europe/Berlin" || string(l[0].Input) != `{"name":"cron"}` {
			t.Fatalf("stored %+v", l)
		}
		id := l[0].ID.String()
		b.get(p.location).want(200).contains("Schedule created.", "*/5 * * * *", "enabled")
		b.post("/w/ws/schedules/"+id+"/disable", nil).want(http.StatusSeeOther)
		if e.schedules()[0].Enabled {
			t.Fatal("still enabled")
		}
		b.get("/w/ws/schedules").contains("disabled")
		b.post("/w/ws/schedules/"+id+"/enable", nil).want(http.StatusSeeOther)
		if !e.schedules()[0].Enabled {
			t.Fatal("not enabled again")
		}
		b.post("/w/ws/schedules/"+id+"/delete", nil).want(http.StatusSeeOther)
		if len(e.schedules()) != 0 {
			t.Fatal("not deleted")
		}
		b.post("/w/ws/schedules/"+id+"/delete", nil).want(http.StatusNotFound)
	})
}

// TestSyncNow: "Sync now" syncs the branch head; a broken manifest is
// shown in full and the catalog keeps the last good commit.
func TestSyncNow(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		b := e.browser()
		b.login(adminToken)
		b.post("/w/ws/sources/main/sync", nil).want(200).contains("is up to date")
		e.repo.Write(t, map[string]string{"windforce.yaml": "apps: [\n"})
		e.repo.CommitPush(t, "break the manifest")
		b.post("/w/ws/sources/main/sync", nil).want(http.StatusUnprocessableEntity).contains("Sync of main failed", "sync failed")
		b.get("/w/ws/apps").want(200).contains("Last sync failed", "hello/greet")
		b.post("/w/ws/sources/nope/sync", nil).want(http.StatusNotFound)
	})
}
