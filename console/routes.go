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
// session; the scope each route needs is the API's for the same action.
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
	read, run, admin := auth.ScopeRead, auth.ScopeRun, auth.ScopeAdmin
	c.handle("GET "+w+"/{$}", "runs", read, func(q *req) error { redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/runs"); return nil })
	c.handle("GET "+w+"/runs", "runs", read, c.runsPage)
	c.handle("GET "+w+"/jobs/{id}", "runs", read, c.jobPage)
	c.handle("GET "+w+"/jobs/{id}/logs", "runs", read, c.jobLogs)
	c.handle("GET "+w+"/jobs/{id}/outcome", "apps", read, c.jobOutcome)
	c.handle("POST "+w+"/jobs/{id}/cancel", "runs", run, c.cancelJob)
	c.handle("POST "+w+"/jobs/{id}/reopen", "runs", auth.ScopeOperator, c.reopenJob)
	c.handle("POST "+w+"/jobs/{id}/rerun", "runs", run, c.rerunJob)
	c.handle("GET "+w+"/apps", "apps", read, c.appsPage)
	c.handle("GET "+w+"/apps/{app}/{action}", "apps", read, c.actionPage)
	c.handle("POST "+w+"/apps/{app}/{action}/run", "apps", run, c.runAction)
	c.handle("GET "+w+"/sources", "sources", read, c.sourcesPage)
	c.handle("POST "+w+"/sources/{id}/sync", "sources", admin, c.syncSource)
	c.handle("GET "+w+"/schedules", "schedules", read, c.schedulesPage)
	c.handle("GET "+w+"/schedules/preview", "schedules", read, c.schedulePreview)
	c.handle("POST "+w+"/schedules", "schedules", admin, c.createSchedule)
	c.handle("POST "+w+"/schedules/{id}/enable", "schedules", admin, c.enableSchedule)
	c.handle("POST "+w+"/schedules/{id}/disable", "schedules", admin, c.disableSchedule)
	c.handle("POST "+w+"/schedules/{id}/delete", "schedules", admin, c.deleteSchedule)
	c.handle("GET "+w+"/health", "health", read, c.healthPage)
}
