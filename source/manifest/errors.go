package manifest

import (
	"errors"
	"fmt"
	"strings"
)

// FileName is the manifest's path at the root of the tree.
const FileName = "windforce.yaml"

// ErrInvalid is matched (errors.Is) by every *Error.
var ErrInvalid = errors.New("invalid manifest")

// Problem is one thing wrong with a source: the file, the field (a dotted
// path such as apps.hello.actions.greet.input_schema, "" for the whole
// file) and what is wrong.
type Problem struct {
	File    string `json:"file"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// String is "file: field: message".
func (p Problem) String() string {
	if p.Field == "" {
		return p.File + ": " + p.Message
	}
	return p.File + ": " + p.Field + ": " + p.Message
}

// Error is a refused source with every problem found.
type Error struct {
	Problems []Problem
}

// Error lists the problems, one per line after the first.
func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return ErrInvalid.Error() + ": " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// problems collects Problems while validating.
type problems struct{ list []Problem }

func (ps *problems) add(file, field, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
}

// err is nil when nothing was found.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &Error{Problems: ps.list}
}
