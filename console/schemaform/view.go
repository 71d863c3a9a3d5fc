package schemaform

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"
)

// field is what the templates need to write one control, fieldset or
// array of rows.
type field struct {
	Kind      string // text, textarea, select, checkbox, object, array
	InputType string // the <input type> of Kind "text"
	Name      string // the JSON pointer of the value
	ID        string
	Label     string
	Required  bool
	Help      string
	Err       string

	Value   string
	Checked bool
	Options []option

	// Constraint attributes; empty ones are not written.
	MinLength, MaxLength, Pattern, HTMLPattern string
	Min, Max, Step, XMin, XMax                 string

	Children []*field // object properties
	Rows     []*row   // array rows
	Template *row     // array row for schemaform.js to clone, index "-"
	MinItems string
	MaxItems string

	RowNum string // "1"… on the item of a row; "" elsewhere
	InRow  bool
}

// HelpID is the id of the help text.
func (f *field) HelpID() string { return f.ID + "__help" }

// ErrID is the id of the error message.
func (f *field) ErrID() string { return f.ID + "__err" }

// DescribedBy lists the help and error ids for aria-describedby.
func (f *field) DescribedBy() string {
	var ids []string
	if f.Help != "" {
		ids = append(ids, f.HelpID())
	}
	if f.Err != "" {
		ids = append(ids, f.ErrID())
	}
	return strings.Join(ids, " ")
}

// row is one element of an array.
type row struct {
	Index string
	Item  *field
}

// option is one choice of a select.
type option struct {
	Value, Label string
	Selected     bool
}

// maxFields bounds the fields one form shows (rows of long arrays in
// values, minItems rows of nested arrays multiply); past it Render gives
// an *UnsupportedError and the console shows the raw JSON instead.
const maxFields = 5000

// maxPadRows bounds the empty rows added to reach minItems.
const maxPadRows = 20

// builder turns nodes into fields, taking the errors it places out of
// errs so the rest can be shown at the top.
type builder struct {
	errs   map[string]string
	fields int // built so far, against maxFields
}

// errTooMany stops building once maxFields is passed.
var errTooMany = &UnsupportedError{Reason: "too many fields for a form"}

// fieldFor builds the field for node n holding value v (present tells
// whether the value is there at all).
func (b *builder) fieldFor(n *node, ptr, key string, required bool, v any, present bool) *field {
	if b.fields++; b.fields > maxFields {
		panic(errTooMany) // recovered by Render; unwinding beats threading an error through every builder
	}
	f := &field{Name: ptr, ID: idFor(ptr), Label: n.title, Required: required, Help: n.description}
	if f.Label == "" {
		f.Label = key
	}
	if msg, ok := b.errs[ptr]; ok {
		f.Err = msg
		delete(b.errs, ptr)
	}
	switch n.kind {
	case kindObject:
		b.object(f, n, v)
	case kindArray:
		b.array(f, n, v)
	case kindBoolean:
		f.Kind, f.Required = "checkbox", false // false is always posted
		f.Checked = v == true
	case kindEnum:
		b.enum(f, n, v, present)
	case kindNumber, kindInteger:
		number(f, n, v, present)
	default:
		text(f, n, v, present)
	}
	return f
}

// object adds a field per property.
func (b *builder) object(f *field, n *node, v any) {
	f.Kind = "object"
	m, _ := v.(map[string]any)
	for _, p := range n.props {
		cv, ok := m[p.key]
		f.Children = append(f.Children, b.fieldFor(p.node, child(f.Name, p.key), p.key, p.required, cv, ok))
	}
}

// array adds a row per element, at least minItems, and the row template.
func (b *builder) array(f *field, n *node, v any) {
	f.Kind = "array"
	f.MinItems, f.MaxItems = intAttr(n.minItems), intAttr(n.maxItems)
	elems, _ := v.([]any)
	count := len(elems)
	if n.minItems != nil && float64(count) < *n.minItems {
		count = int(math.Min(*n.minItems, maxPadRows))
	}
	for i := 0; i < count; i++ {
		var ev any
		ok := i < len(elems)
		if ok {
			ev = elems[i]
		}
		f.Rows = append(f.Rows, b.row(n.items, f.Name, strconv.Itoa(i), ev, ok))
	}
	// The template holds no value and takes no error.
	tb := &builder{fields: b.fields}
	f.Template = tb.row(n.items, f.Name, "-", nil, false)
	b.fields = tb.fields
}

// row builds the item field of one array row.
func (b *builder) row(items *node, arrPtr, idx string, v any, present bool) *row {
	label := items.title
	if label == "" {
		label = "Item"
	}
	item := b.fieldFor(items, arrPtr+"/"+idx, label, true, v, present)
	item.Label, item.InRow = label, true
	// A row is there to hold a value, so Parse treats it as required;
	// only a row that cannot be empty (a number, a choice) says so.
	item.Required = (items.kind == kindNumber || items.kind == kindInteger || items.kind == kindEnum) && !items.nullable
	if i, err := strconv.Atoi(idx); err == nil {
		item.RowNum = strconv.Itoa(i + 1)
	}
	return &row{Index: idx, Item: item}
}

// enum makes a select whose option values are the JSON of each member,
// so members of any type (and "" itself) post unambiguously.
func (b *builder) enum(f *field, n *node, v any, present bool) {
	f.Kind = "select"
	cur := ""
	if present {
		cur = canonical(v)
	}
	hasSelected := false
	for _, raw := range n.enum {
		mv, err := decode(raw)
		if err != nil {
			continue
		}
		val := canonical(mv)
		label := val
		if s, ok := mv.(string); ok {
			label = s
		}
		sel := present && val == cur
		hasSelected = hasSelected || sel
		f.Options = append(f.Options, option{Value: val, Label: label, Selected: sel})
	}
	if !f.Required || !hasSelected {
		empty := option{Label: "(none)", Selected: !hasSelected}
		if f.Required {
			empty.Label = "Choose…"
		}
		f.Options = append([]option{empty}, f.Options...)
	}
}

// number sets the number input and its bounds. HTML has no exclusive
// bounds: an integer's becomes the next whole number, a number's goes to
// data attributes that schemaform.js checks.
func number(f *field, n *node, v any, present bool) {
	f.Kind, f.InputType = "text", "number"
	f.Value = scalarText(v, present)
	isInt := n.kind == kindInteger
	f.Step = "any"
	if isInt {
		f.Step = "1"
		if m := n.multipleOf; m != nil && *m >= 1 && *m == math.Trunc(*m) && n.minimum == nil && n.exclMin == nil {
			f.Step = fmtNum(*m)
		}
	} else if m := n.multipleOf; m != nil && *m > 0 && n.minimum == nil && n.exclMin == nil {
		f.Step = fmtNum(*m)
	}
	lo, hi := n.minimum, n.maximum
	if isInt {
		lo, hi = ceil(lo), floor(hi)
		if n.exclMin != nil {
			lo = maxPtr(lo, floor(n.exclMin), 1)
		}
		if n.exclMax != nil {
			hi = minPtr(hi, ceil(n.exclMax), -1)
		}
	} else {
		f.XMin, f.XMax = numAttr(n.exclMin), numAttr(n.exclMax)
	}
	f.Min, f.Max = numAttr(lo), numAttr(hi)
}

// text sets a text-like input, or a textarea for long strings.
func text(f *field, n *node, v any, present bool) {
	f.Kind, f.InputType = "text", "text"
	f.Value = scalarText(v, present)
	f.MinLength, f.MaxLength = intAttr(n.minLength), intAttr(n.maxLength)
	if n.pattern != "" {
		f.Pattern = n.pattern
		// HTML anchors pattern to the whole value; JSON Schema does not.
		f.HTMLPattern = ".*(?:" + n.pattern + ").*"
	}
	switch n.format {
	case "date":
		f.InputType = "date"
	case "email":
		f.InputType = "email"
	case "uri", "url":
		f.InputType = "url"
	case "date-time":
		f.InputType = "datetime-local"
		f.Step = "1" // seconds
		f.Value = localTime(f.Value)
		f.Help = strings.TrimSpace(f.Help + " Time in UTC.")
	default:
		if n.maxLength != nil && *n.maxLength > 200 {
			f.Kind, f.HTMLPattern = "textarea", ""
		}
	}
}

// localTime shows an RFC 3339 time as the UTC wall time a datetime-local
// input takes; anything else is shown as it is.
func localTime(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2006-01-02T15:04:05")
}

// scalarText is the text of a value in an input: a string as it is,
// anything else as its JSON.
func scalarText(v any, present bool) string {
	if !present || v == nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return canonical(v)
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func numAttr(p *float64) string {
	if p == nil || math.IsInf(*p, 0) || math.IsNaN(*p) {
		return ""
	}
	return fmtNum(*p)
}

func intAttr(p *float64) string {
	if p == nil || *p < 0 || *p > math.MaxInt32 {
		return ""
	}
	return strconv.Itoa(int(math.Ceil(*p)))
}

func ceil(p *float64) *float64 {
	if p == nil {
		return nil
	}
	c := math.Ceil(*p)
	return &c
}

func floor(p *float64) *float64 {
	if p == nil {
		return nil
	}
	c := math.Floor(*p)
	return &c
}

// maxPtr is the larger of a and b+d (b not nil).
func maxPtr(a, b *float64, d float64) *float64 {
	v := *b + d
	if a != nil && *a > v {
		v = *a
	}
	return &v
}

// minPtr is the smaller of a and b+d (b not nil).
func minPtr(a, b *float64, d float64) *float64 {
	v := *b + d
	if a != nil && *a < v {
		v = *a
	}
	return &v
}
