package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
)

// handlerFunc is the shape of every API handler: it returns the value to
// encode as JSON (or a *reply, or text) and an error. It never writes the
// response itself; w is only for http.MaxBytesReader.
type handlerFunc func(w http.ResponseWriter, r *http.Request, c *caller) (any, error)

// reply is a value with a status other than 200.
type reply struct {
	status int
	body   any
}

// text is a plain-text body (job logs).
type text string

// respond writes v, or err mapped to its status and the error body. It is
// the only place a response is written.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, v any, err error) {
	if err != nil {
		ae := toAPIError(err)
		level := slog.LevelDebug
		if ae.Status >= 500 {
			level = slog.LevelError
		}
		s.log.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path,
			"status", ae.Status, "code", ae.Code, "err", err)
		if ae.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="windforce"`)
		}
		details := ae.Details
		if details == nil {
			details = map[string]any{}
		}
		writeJSON(w, ae.Status, map[string]any{"error": map[string]any{
			"code": ae.Code, "message": ae.Message, "details": details}})
		return
	}
	switch b := v.(type) {
	case streamed: // the handler wrote the response itself (logs_follow.go)
	case text:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, string(b))
	case *reply:
		writeJSON(w, b.status, b.body)
	default:
		writeJSON(w, http.StatusOK, v)
	}
}

// writeJSON encodes v with its status. An encoding failure after the
// header is sent can only be logged by the client's parser; values here
// are plain structs and maps.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
