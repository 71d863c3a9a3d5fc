package server

import (
	"crypto/subtle"
	"net/http"
)

// MetricsAuth guards a /metrics handler with token: a scraper must send
// "Authorization: Bearer <token>" (the scheme in any case, RFC 7235). An
// empty token serves h to anyone, as Prometheus endpoints usually are;
// set one (WINDFORCE_METRICS_TOKEN) when the address is reachable by
// people who should not see queue figures per workspace.
func MetricsAuth(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, err := bearer(r.Header.Get("Authorization"))
		if err != nil || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="windforce metrics"`)
			http.Error(w, "/metrics needs the metrics token: Authorization: Bearer <WINDFORCE_METRICS_TOKEN>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
