package schemaform

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Parse turns a posted run form back into the JSON input, typed by the
// schema: integers and numbers as JSON numbers, booleans from the
// checkbox and its hidden companion, arrays from the indexed names in
// index order with gaps closed, objects from their properties in schema
// order. An empty optional field is left out; an empty required string
// is kept as "" so the schema's own validation reports it. Names the
// schema does not know (the CSRF token, RawField…) are ignored.
//
// A value that does not convert to its type is a *FieldError (several
// are joined with errors.Join; Errors collects them for Render). The
// JSON is then still returned, with each such value kept as the posted
// string, so the console can show the form again as it was filled.
func Parse(schema json.RawMessage, form url.Values) (json.RawMessage, error) {
	root, err := load(schema)
	if err != nil {
		return nil, err
	}
	p := newParser(form)
	v, _ := p.value(root, at{}, true)
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("schemaform: write input: %w", err)
	}
	return out, joinFieldErrors(p.errs)
}

// parser holds the post, the row indices posted under each name, and
// the field errors found so far.
type parser struct {
	form url.Values
	rows map[string][]int
	errs []*FieldError
}

// at names a value twice: form is its name in the post, out its pointer
// in the JSON. They differ under an array whose rows had gaps.
type at struct{ form, out string }

func (a at) child(key string) at { return at{child(a.form, key), child(a.out, key)} }

// newParser indexes the row indices under every name prefix once, so
// reading arrays does not scan the whole post for each array.
func newParser(form url.Values) *parser {
	seen := map[string]map[int]bool{}
	for k := range form {
		slashes := 0
		for i := 0; i < len(k); i++ {
			if k[i] != '/' {
				continue
			}
			// No field of a schema within maxDepth is deeper; the bound
			// keeps a name of many "/0" from costing quadratic time.
			if slashes++; slashes > 2*maxDepth+2 {
				break
			}
			rest := k[i+1:]
			tok, _, _ := strings.Cut(rest, "/")
			n, ok := arrayIndex(tok)
			if !ok {
				continue
			}
			if seen[k[:i]] == nil {
				seen[k[:i]] = map[int]bool{}
			}
			seen[k[:i]][n] = true
		}
	}
	rows := make(map[string][]int, len(seen))
	for prefix, set := range seen {
		idx := make([]int, 0, len(set))
		for n := range set {
			idx = append(idx, n)
		}
		sort.Ints(idx)
		rows[prefix] = idx
	}
	return &parser{form: form, rows: rows}
}

func (p *parser) fail(ptr, msg string) {
	p.errs = append(p.errs, &FieldError{Pointer: ptr, Message: msg})
}

// value reads the value named ptr; false means it is left out.
func (p *parser) value(n *node, ptr at, required bool) (any, bool) {
	switch n.kind {
	case kindObject:
		return p.object(n, ptr, required)
	case kindArray:
		return p.array(n, ptr, required)
	case kindBoolean:
		return p.boolean(ptr, required)
	}
	vals := p.form[ptr.form]
	s := ""
	if len(vals) > 0 {
		s = vals[0]
	}
	if s == "" {
		return p.empty(n, ptr.out, required)
	}
	switch n.kind {
	case kindEnum:
		return p.enum(ptr.out, s)
	case kindInteger:
		return p.integer(ptr.out, s)
	case kindNumber:
		return p.number(ptr.out, s)
	}
	if n.format == "date-time" {
		return fromLocalTime(s), true
	}
	return s, true
}

// empty is the value of a field posted empty: left out when optional;
// when required "" for a string, null when the type allows it, else a
// field error (and the value left out) because no value of the type is
// empty.
func (p *parser) empty(n *node, ptr string, required bool) (any, bool) {
	switch {
	case !required:
		return nil, false
	case n.kind == kindString:
		return "", true
	case n.nullable:
		return nil, true
	case n.kind == kindEnum:
		p.fail(ptr, "choose a value")
	default:
		p.fail(ptr, "enter a number")
	}
	return nil, false
}

// object reads each property; an optional object with nothing in it is
// left out.
func (p *parser) object(n *node, ptr at, required bool) (any, bool) {
	o := &object{}
	for _, pr := range n.props {
		if v, ok := p.value(pr.node, ptr.child(pr.key), pr.required); ok {
			o.set(pr.key, v)
		}
	}
	if len(o.keys) == 0 && !required {
		return nil, false
	}
	return o, true
}

// array reads the rows present in the post, in index order, renumbered
// from 0 so removed rows leave no holes.
func (p *parser) array(n *node, ptr at, required bool) (any, bool) {
	idx := p.rows[ptr.form]
	if len(idx) == 0 && !required {
		return nil, false
	}
	out := make([]any, 0, len(idx))
	for i, posted := range idx {
		// The JSON names the closed index: the form is shown again from
		// the returned JSON, whose rows are renumbered.
		v, _ := p.value(n.items, at{index(ptr.form, posted), index(ptr.out, i)}, true)
		out = append(out, v)
	}
	return out, true
}

// boolean reads a checkbox: its hidden companion posts "false" and the
// box, when checked, "true". A field absent from the post is left out
// (or false when required).
func (p *parser) boolean(ptr at, required bool) (any, bool) {
	vals, posted := p.form[ptr.form]
	if !posted {
		if required {
			return false, true
		}
		return nil, false
	}
	v := false
	for _, s := range vals {
		switch strings.ToLower(s) {
		case "true", "on", "1":
			v = true
		case "false", "off", "0", "":
		default:
			p.fail(ptr.out, "must be true or false")
			return s, true
		}
	}
	return v, true
}

// enum reads an option value, which is the JSON of the member.
func (p *parser) enum(ptr, s string) (any, bool) {
	if !json.Valid([]byte(s)) {
		p.fail(ptr, "is not one of the choices")
		return s, true
	}
	return json.RawMessage(s), true
}

// jsonNumber is the JSON number syntax.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// number reads a finite number, written back as the JSON text posted.
func (p *parser) number(ptr, s string) (any, bool) {
	s = strings.TrimSpace(s)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		p.fail(ptr, "must be a number")
		return s, true
	}
	if !jsonNumber.MatchString(s) { // "+1", ".5", "1." parse but are not JSON
		s = strconv.FormatFloat(f, 'g', -1, 64)
	}
	return json.Number(s), true
}

// integer reads a whole number of any size; "3.0" and "1e3" are whole.
func (p *parser) integer(ptr, s string) (any, bool) {
	s = strings.TrimSpace(s)
	if len(s) <= 400 {
		if i, ok := new(big.Int).SetString(s, 10); ok {
			return json.Number(i.String()), true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		p.fail(ptr, "must be a whole number")
		return s, true
	}
	return json.Number(strconv.FormatInt(int64(f), 10)), true
}

// fromLocalTime turns the UTC wall time a datetime-local input posts
// ("2026-11-30T12:00" or with seconds) into RFC 3339; any other text
// (already RFC 3339, or wrong) is passed on for the schema to judge.
func fromLocalTime(s string) string {
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Format(time.RFC3339Nano)
		}
	}
	return s
}
