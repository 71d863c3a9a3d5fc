package schemaform

import (
	"strconv"
	"strings"
)

// idPrefix starts every element id Render writes, so the form's ids do
// not collide with the console's own.
const idPrefix = "sf"

// Names of the form fields Render adds beside the schema's fields.
const (
	// RawField is the textarea holding the input as JSON.
	RawField = "__raw"
	// RawModeField is the checkbox that, when posted as "1", asks the
	// console to use RawField instead of the fields.
	RawModeField = "__raw_mode"
)

// child is the JSON pointer of a property or array index under ptr.
func child(ptr, token string) string {
	token = strings.ReplaceAll(token, "~", "~0")
	token = strings.ReplaceAll(token, "/", "~1")
	return ptr + "/" + token
}

// index is the JSON pointer of array element i under ptr.
func index(ptr string, i int) string {
	return ptr + "/" + strconv.Itoa(i)
}

// unescapeToken undoes the ~1 and ~0 escapes of one pointer token.
func unescapeToken(token string) string {
	token = strings.ReplaceAll(token, "~1", "/")
	return strings.ReplaceAll(token, "~0", "~")
}

// idFor is the element id of the field named ptr. Letters, digits and
// "-" stay, "/" becomes ".", and every other byte becomes "_" and two hex
// digits, so the mapping is one to one and the id of a row's field starts
// with the id of the row (schemaform.js renames rows by that prefix).
// An id never contains "__", which the suffixes of help and error ids use.
func idFor(ptr string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(idPrefix) + len(ptr))
	b.WriteString(idPrefix)
	for i := 0; i < len(ptr); i++ {
		c := ptr[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
			b.WriteByte(c)
		case c == '/':
			b.WriteByte('.')
		default:
			b.WriteByte('_')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}
