package server

import (
	"net/http"
	"time"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/metrics"
)

// Streams in these tests re-check their caller often, so revocation is
// seen within a test's patience. Set before any test runs.
func init() { followRecheck = 200 * time.Millisecond }

// PublicMessage is publicMessage, for the test that no driver text leaks.
var PublicMessage = publicMessage

// RouteActions is the action of each API route, by pattern, as routes
// registers them on a server that serves nothing.
func RouteActions() map[string]auth.Action {
	s := &Server{mux: http.NewServeMux(), cfg: Config{Metrics: metrics.New(metrics.Options{})}, actions: map[string]auth.Action{}}
	s.routes()
	return s.actions
}
