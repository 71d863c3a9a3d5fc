package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/windforce/windforce/spine"
)

// readBody reads a request body of at most limit bytes. A declared
// Content-Length over the limit is refused before anything is read, and
// http.MaxBytesReader stops an undeclared (chunked) body at the limit, so
// an oversized body is never held whole in memory (413).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, errorf(http.StatusBadRequest, CodeBadRequest, "read request body: %v", err)
	}
	return data, nil
}

func tooLarge(limit int64) *Error {
	e := errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body over the limit of %d bytes (WINDFORCE_MAX_INPUT_BYTES)", limit)
	e.Details = map[string]any{"limit": limit}
	return e
}

// checkJSON refuses a body that is not one valid JSON value in UTF-8, or
// that holds text only one database could store (NUL, a lone surrogate
// escape; spine.CheckText): both databases refuse it up front (400).
func checkJSON(data []byte) error {
	if !utf8.Valid(data) {
		return errorf(http.StatusBadRequest, CodeBadRequest, "request body is not valid UTF-8")
	}
	if !json.Valid(data) {
		return errorf(http.StatusBadRequest, CodeBadRequest, "request body is not valid JSON")
	}
	if err := spine.CheckText("request body", data); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: CodeBadRequest, Message: publicMessage(err), Err: err}
	}
	return nil
}

// decodeOptional decodes a small JSON request body into dst; an empty
// body leaves dst as it is. Unknown fields are refused so a typo is seen.
func decodeOptional(w http.ResponseWriter, r *http.Request, limit int64, dst any) error {
	data, err := readBody(w, r, limit)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := checkJSON(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return errorf(http.StatusBadRequest, CodeBadRequest, "request body: %v", err)
	}
	return nil
}

// inputBody reads and checks an input body (run, token webhook): empty
// means {}, otherwise one JSON value in UTF-8 without NUL.
func inputBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	raw, err := readBody(w, r, limit)
	if err != nil {
		return nil, err
	}
	return normalizeBody(raw)
}

// normalizeBody applies run's rules: empty means {}, otherwise one JSON
// value in UTF-8 without NUL.
func normalizeBody(raw []byte) ([]byte, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return []byte("{}"), nil
	}
	if err := checkJSON(raw); err != nil {
		return nil, err
	}
	return raw, nil
}
