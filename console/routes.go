package console

import (
	"embed"
	"io/fs"
	"net/http"
	"net/url"

	"github.com/windforce/windforce/auth"
)

//go:embed static
var staticFS embed.FS

// routes registers the console's pages. Everything under /w/{ws}/ needs a
// session; each page names its action, and the scope it needs is
// auth.Need of it, the same the API route for that action needs.
func (c *Console) routes() {
	static, _ := fs.Sub(staticFS, "static")
	fileServer := http.StripPrefix("/static/", http.FileServerFS(static))
	c.mux.Handle("GET /static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		fileServer.ServeHTTP(w, r)
	}))
	c.mux.HandleFunc("GET /login", c.loginPage)
	c.mux.HandleFunc("POST /login", c.login)
	c.mux.HandleFunc("POST /logout", c.logout)
	c.mux.HandleFunc("GET /switch", c.switchWorkspace)
	c.mux.HandleFunc("/", c.root)

	const w = "/w/{ws}"
	read := auth.ActionRead
	c.handle("GET "+w+"/{$}", "runs", read, c.toRuns)
	c.handle("GET "+w+"/runs", "runs", read, c.runsPage)
	c.handle("GET "+w+"/runs/requeue", "runs", auth.ActionRequeue, c.requeueConfirm)
	c.handle("POST "+w+"/runs/requeue", "runs", auth.ActionRequeue, c.requeueJobs)
	c.handle("GET "+w+"/jobs/{id}", "runs", read, c.jobPage)
	c.handle("GET "+w+"/jobs/{id}/logs", "runs", read, c.jobLogs)
	c.handle("GET "+w+"/jobs/{id}/outcome", "apps", read, c.jobOutcome)
	c.handle("POST "+w+"/jobs/{id}/cancel", "runs", auth.ActionCancel, c.cancelJob)
	c.handle("POST "+w+"/jobs/{id}/reopen", "runs", auth.ActionReopen, c.reopenJob)
	c.handle("POST "+w+"/jobs/{id}/rerun", "runs", auth.ActionRun, c.rerunJob)
	c.handle("GET "+w+"/apps", "apps", read, c.appsPage)
	c.handle("GET "+w+"/apps/{app}", "apps", read, c.appPage)
	c.handle("POST "+w+"/apps/{app}/deploy", "apps", auth.ActionDeploy, c.deployFile)
	c.handle("GET "+w+"/apps/{app}/{action}", "apps", read, c.actionPage)
	c.handle("POST "+w+"/apps/{app}/{action}/run", "apps", auth.ActionRun, c.runAction)
	c.handle("GET "+w+"/sources", "sources", read, c.sourcesPage)
	c.handle("POST "+w+"/sources/{id}/sync", "sources", auth.ActionSyncSource, c.syncSource)
	c.handle("GET "+w+"/schedules", "schedules", read, c.schedulesPage)
	c.handle("GET "+w+"/schedules/preview", "schedules", read, c.schedulePreview)
	c.handle("POST "+w+"/schedules", "schedules", auth.ActionCreateSchedule, c.createSchedule)
	c.handle("POST "+w+"/schedules/{id}/enable", "schedules", auth.ActionEditSchedule, c.enableSchedule)
	c.handle("POST "+w+"/schedules/{id}/disable", "schedules", auth.ActionEditSchedule, c.disableSchedule)
	c.handle("POST "+w+"/schedules/{id}/delete", "schedules", auth.ActionDeleteSchedule, c.deleteSchedule)
	c.handle("GET "+w+"/health", "health", read, c.healthPage)
	c.handle("GET "+w+"/events", "events", read, c.eventsPage)
	c.handle("POST "+w+"/events/sinks", "events", auth.ActionManageSinks, c.createSink)
	c.handle("GET "+w+"/events/sinks/{id}", "events", read, c.sinkPage)
	c.handle("POST "+w+"/events/sinks/{id}/delete", "events", auth.ActionManageSinks, c.deleteSink)
	c.handle("GET "+w+"/secrets", "secrets", read, c.secretsPage)
	c.handle("POST "+w+"/secrets", "secrets", auth.ActionSetSecret, c.setSecret)
	c.handle("GET "+w+"/secrets/audit", "secrets", auth.ActionSecretAudit, c.secretAuditPage)
	c.handle("GET "+w+"/secrets/{name}/delete", "secrets", auth.ActionDeleteSecret, c.deleteSecretConfirm)
	c.handle("POST "+w+"/secrets/{name}/delete", "secrets", auth.ActionDeleteSecret, c.deleteSecret)
}

// toRuns sends a workspace's root to its runs page.
func (c *Console) toRuns(q *req) error {
	redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/runs")
	return nil
}

// Actions is the action of each workspace page of the console, by route
// pattern ("POST /w/{ws}/jobs/{id}/cancel"); the scope a page needs is
// auth.Need of its action, the one the API route for that action needs.
// It is the console's half of the one scope table, for the test that
// holds the console and the API to it.
func Actions() map[string]auth.Action {
	c := &Console{mux: http.NewServeMux(), actions: map[string]auth.Action{}}
	c.routes()
	return c.actions
}
