package schemaform

import (
	"errors"
	"fmt"
	"sort"
)

// UnsupportedError says a schema uses a construct the form cannot
// express (oneOf, an external $ref, an additionalProperties map, a
// property without a type…). The console answers it by offering only the
// raw JSON editor for that action.
type UnsupportedError struct {
	// Pointer is the location of the construct in the schema document,
	// e.g. "/properties/items/items/oneOf".
	Pointer string
	// Reason says what is not supported.
	Reason string
}

// Error reads "schemaform: unsupported schema at /properties/x: oneOf".
func (e *UnsupportedError) Error() string {
	ptr := e.Pointer
	if ptr == "" {
		ptr = "(root)"
	}
	return fmt.Sprintf("schemaform: unsupported schema at %s: %s", ptr, e.Reason)
}

// FieldError is a posted value that does not convert to the type its
// schema names: where (the JSON pointer, which is also the field's name)
// and why, worded for the person filling the form.
type FieldError struct {
	Pointer string
	Message string
}

// Error reads "/items/0/qty: must be a whole number".
func (e *FieldError) Error() string {
	ptr := e.Pointer
	if ptr == "" {
		ptr = "(root)"
	}
	return ptr + ": " + e.Message
}

// Errors collects the *FieldError values in err (one, or several joined
// by errors.Join as Parse returns them) into the map Render takes, so the
// console can show each message next to its field. It returns nil when
// err holds no *FieldError.
func Errors(err error) map[string]string {
	var out map[string]string
	var walk func(error)
	walk = func(e error) {
		switch u := e.(type) {
		case *FieldError:
			if out == nil {
				out = map[string]string{}
			}
			if _, dup := out[u.Pointer]; !dup {
				out[u.Pointer] = u.Message
			}
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

// joinFieldErrors returns nil, the one error, or all of them joined in
// pointer order.
func joinFieldErrors(fes []*FieldError) error {
	switch len(fes) {
	case 0:
		return nil
	case 1:
		return fes[0]
	}
	sort.SliceStable(fes, func(i, j int) bool { return fes[i].Pointer < fes[j].Pointer })
	errs := make([]error, len(fes))
	for i, fe := range fes {
		errs[i] = fe
	}
	return errors.Join(errs...)
}
