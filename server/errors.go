package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/source"
	"github.com/windforce/windforce/spine"
)

// Error codes of the error body, one per status the API answers.
const (
	CodeBadRequest   = "bad_request"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeNotFound     = "not_found"
	CodeConflict     = "conflict"
	CodeTooLarge     = "payload_too_large"
	CodeInvalidInput = "invalid_input"
	// CodeMissingSecret: the job's env names a secret the workspace lacks.
	CodeMissingSecret = "missing_secret"
	CodeSyncFailed    = "sync_failed"
	CodeUnavailable   = "unavailable"
	CodeInternal      = "internal"
)

// Error is an API error: the status it answers with and the error body
// {"error":{"code","message","details"}}. Handlers return it, or a typed
// error of the layers below that toAPIError maps to one.
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	// Err is the cause, logged for server errors and never shown.
	Err error
}

// Error reads "404 not_found: no job …".
func (e *Error) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// errorf builds an API error with a formatted message and no details.
func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// toAPIError maps an error to its status and code: the typed errors of
// spine, catalog, source and auth; anything else is a 500 whose cause is
// logged, not shown.
func toAPIError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	var ie *catalog.InputError
	if errors.As(err, &ie) {
		return &Error{Status: http.StatusUnprocessableEntity, Code: CodeInvalidInput, Err: err,
			Message: "input does not match the action's input schema",
			Details: map[string]any{"fields": ie.Fields}}
	}
	var ms *catalog.MissingSecretError
	if errors.As(err, &ms) {
		return &Error{Status: http.StatusUnprocessableEntity, Code: CodeMissingSecret, Err: err,
			Message: ms.Error(), Details: map[string]any{"secrets": ms.Names}}
	}
	var se *source.SyncError
	if errors.As(err, &se) {
		status := http.StatusBadGateway
		if se.UserError() {
			status = http.StatusUnprocessableEntity
		}
		return &Error{Status: status, Code: CodeSyncFailed, Message: se.Message(), Err: err,
			Details: map[string]any{"source": se.Source, "step": se.Step, "commit": se.Commit}}
	}
	switch {
	case errors.Is(err, spine.ErrNotFound): // every kind's not-found matches it
		return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: err.Error(), Err: err}
	case errors.Is(err, spine.ErrConflict), errors.Is(err, catalog.ErrConflict):
		return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: publicMessage(err), Err: err}
	case errors.Is(err, spine.ErrInvalid):
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: publicMessage(err), Err: err}
	}
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error", Err: err}
}

// publicMessage is err's text as a response may show it: a database
// driver's own text (SQL, constraint and column names, the value it
// choked on) is never shown; it stays in the chain for the log.
func publicMessage(err error) string {
	var pg interface{ SQLState() string } // pgx's *pgconn.PgError
	var lite interface{ Code() int }      // modernc.org/sqlite's *Error
	switch {
	case errors.As(err, &pg), errors.As(err, &lite):
		if errors.Is(err, spine.ErrConflict) || errors.Is(err, catalog.ErrConflict) {
			return "the request conflicts with a row that already exists"
		}
		return "the database refused a value of the request"
	}
	return err.Error()
}
