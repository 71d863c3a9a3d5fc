package schemaform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// kind is the form control a schema maps to.
type kind int

const (
	kindString kind = iota
	kindNumber
	kindInteger
	kindBoolean
	kindEnum
	kindObject
	kindArray
)

// maxDepth bounds schema nesting (and $ref chains), so a hostile or
// recursive schema cannot make Render or Parse recurse without end.
const maxDepth = 32

// maxNodes bounds the schemas one form is built from once $refs are
// expanded: a few $defs that each use the previous one many times would
// otherwise grow exponentially. No run form needs this many fields.
const maxNodes = 2000

// node is one schema reduced to what the form needs.
type node struct {
	kind     kind
	nullable bool // "type": ["x", "null"]

	title, description string
	format             string
	def                json.RawMessage // default, nil when absent

	enum []json.RawMessage // kindEnum: the allowed values

	props []prop // kindObject, in document order
	items *node  // kindArray

	minLength, maxLength *float64
	pattern              string
	minimum, maximum     *float64
	exclMin, exclMax     *float64
	multipleOf           *float64
	minItems, maxItems   *float64
}

// prop is one property of an object schema.
type prop struct {
	key      string
	required bool
	node     *node
}

// unsupportedKeywords change the shape of a value in ways a form of fixed
// fields cannot follow.
var unsupportedKeywords = []string{
	"oneOf", "anyOf", "allOf", "patternProperties", "prefixItems",
	"$dynamicRef", "dependentSchemas",
}

// loader builds nodes from one schema document, resolving local $refs.
type loader struct {
	doc   json.RawMessage
	refs  []string // $refs being resolved, to refuse cycles
	nodes int      // built so far, against maxNodes
}

// load reads a schema document whose root must be an object schema (an
// action input is an object of named fields).
func load(schema json.RawMessage) (*node, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return nil, &UnsupportedError{Reason: "no schema"}
	}
	if !json.Valid(schema) {
		return nil, fmt.Errorf("schemaform: read schema: not valid JSON")
	}
	l := &loader{doc: schema}
	n, err := l.build(schema, "", 0)
	if err != nil {
		return nil, err
	}
	if n.kind != kindObject {
		return nil, &UnsupportedError{Reason: "the input is not an object"}
	}
	return n, nil
}

// build reduces the schema raw found at loc (a pointer into the document).
func (l *loader) build(raw json.RawMessage, loc string, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, &UnsupportedError{Pointer: loc, Reason: "nested too deeply"}
	}
	if l.nodes++; l.nodes > maxNodes {
		return nil, &UnsupportedError{Pointer: loc, Reason: "too many fields for a form"}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, &UnsupportedError{Pointer: loc, Reason: "not an object schema (no type)"}
	}
	for _, k := range unsupportedKeywords {
		if _, ok := m[k]; ok {
			return nil, &UnsupportedError{Pointer: loc + "/" + k, Reason: k}
		}
	}
	if ref, ok := m["$ref"]; ok {
		return l.ref(m, ref, loc, depth)
	}
	n := &node{}
	annotate(n, m)
	if err := setKind(n, m, loc); err != nil {
		return nil, err
	}
	switch n.kind {
	case kindObject:
		return n, l.object(n, m, loc, depth)
	case kindArray:
		items, ok := m["items"]
		if !ok {
			return nil, &UnsupportedError{Pointer: loc, Reason: "array without items"}
		}
		it, err := l.build(items, loc+"/items", depth+1)
		n.items = it
		return n, err
	}
	return n, nil
}

// annotate copies the annotations and constraints a field shows.
func annotate(n *node, m map[string]json.RawMessage) {
	str := func(k string, dst *string) {
		if v, ok := m[k]; ok {
			_ = json.Unmarshal(v, dst) // a non-string annotation is ignored
		}
	}
	num := func(k string) *float64 {
		v, ok := m[k]
		if !ok {
			return nil
		}
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return nil
		}
		return &f
	}
	str("title", &n.title)
	str("description", &n.description)
	str("format", &n.format)
	str("pattern", &n.pattern)
	if d, ok := m["default"]; ok {
		n.def = d
	}
	n.minLength, n.maxLength = num("minLength"), num("maxLength")
	n.minimum, n.maximum = num("minimum"), num("maximum")
	n.exclMin, n.exclMax = num("exclusiveMinimum"), num("exclusiveMaximum")
	n.multipleOf = num("multipleOf")
	n.minItems, n.maxItems = num("minItems"), num("maxItems")
}

// setKind reads "type" and "enum". A type list may add "null" to one
// type; an enum without a type is still a choice.
func setKind(n *node, m map[string]json.RawMessage, loc string) error {
	var types []string
	if t, ok := m["type"]; ok {
		var one string
		if json.Unmarshal(t, &one) == nil {
			types = []string{one}
		} else if json.Unmarshal(t, &types) != nil {
			return &UnsupportedError{Pointer: loc + "/type", Reason: "type is neither a string nor a list"}
		}
	}
	var typ string
	for _, t := range types {
		if t == "null" {
			n.nullable = true
			continue
		}
		if typ != "" {
			return &UnsupportedError{Pointer: loc + "/type", Reason: "more than one type"}
		}
		typ = t
	}
	if e, ok := m["enum"]; ok {
		if json.Unmarshal(e, &n.enum) != nil || len(n.enum) == 0 {
			return &UnsupportedError{Pointer: loc + "/enum", Reason: "enum is not a non-empty list"}
		}
		n.kind = kindEnum
		return nil
	}
	kinds := map[string]kind{
		"string": kindString, "number": kindNumber, "integer": kindInteger,
		"boolean": kindBoolean, "object": kindObject, "array": kindArray,
	}
	k, ok := kinds[typ]
	if !ok {
		if typ == "" {
			return &UnsupportedError{Pointer: loc, Reason: "no type"}
		}
		return &UnsupportedError{Pointer: loc + "/type", Reason: "type " + typ}
	}
	n.kind = k
	return nil
}

// object reads the properties, in document order, and refuses maps.
func (l *loader) object(n *node, m map[string]json.RawMessage, loc string, depth int) error {
	if ap, ok := m["additionalProperties"]; ok {
		var b bool
		var empty map[string]json.RawMessage
		isBool := json.Unmarshal(ap, &b) == nil
		isEmpty := json.Unmarshal(ap, &empty) == nil && len(empty) == 0
		if !isBool && !isEmpty {
			return &UnsupportedError{Pointer: loc + "/additionalProperties", Reason: "additionalProperties map"}
		}
	}
	var required []string
	if r, ok := m["required"]; ok {
		_ = json.Unmarshal(r, &required) // a malformed list marks nothing required
	}
	isReq := map[string]bool{}
	for _, r := range required {
		isReq[r] = true
	}
	keys, raws, err := orderedObject(m["properties"])
	if err != nil {
		return &UnsupportedError{Pointer: loc + "/properties", Reason: "properties is not an object"}
	}
	for _, k := range keys {
		c, err := l.build(raws[k], child(loc+"/properties", k), depth+1)
		if err != nil {
			return err
		}
		n.props = append(n.props, prop{key: k, required: isReq[k], node: c})
	}
	return nil
}

// ref resolves a $ref to a JSON pointer inside the same document. The
// annotations written beside the $ref (title, description, default) win
// over those of the target, as 2020-12 allows them side by side.
func (l *loader) ref(m map[string]json.RawMessage, raw json.RawMessage, loc string, depth int) (*node, error) {
	var ref string
	if json.Unmarshal(raw, &ref) != nil || !strings.HasPrefix(ref, "#") {
		return nil, &UnsupportedError{Pointer: loc + "/$ref", Reason: "$ref outside the document"}
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil || (frag != "" && !strings.HasPrefix(frag, "/")) {
		return nil, &UnsupportedError{Pointer: loc + "/$ref", Reason: "$ref is not a JSON pointer"}
	}
	for _, r := range l.refs {
		if r == frag {
			return nil, &UnsupportedError{Pointer: loc + "/$ref", Reason: "recursive $ref"}
		}
	}
	target, ok := resolve(l.doc, frag)
	if !ok {
		return nil, &UnsupportedError{Pointer: loc + "/$ref", Reason: "$ref target not found"}
	}
	l.refs = append(l.refs, frag)
	n, err := l.build(target, frag, depth+1)
	l.refs = l.refs[:len(l.refs)-1]
	if err != nil {
		return nil, err
	}
	over := &node{}
	annotate(over, m)
	if over.title != "" {
		n.title = over.title
	}
	if over.description != "" {
		n.description = over.description
	}
	if over.def != nil {
		n.def = over.def
	}
	return n, nil
}

// resolve follows a JSON pointer through a document.
func resolve(doc json.RawMessage, ptr string) (json.RawMessage, bool) {
	cur := doc
	if ptr == "" {
		return cur, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = unescapeToken(tok)
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) == nil {
			next, ok := obj[tok]
			if !ok {
				return nil, false
			}
			cur = next
			continue
		}
		var arr []json.RawMessage
		if json.Unmarshal(cur, &arr) != nil {
			return nil, false
		}
		i, ok := arrayIndex(tok)
		if !ok || i >= len(arr) {
			return nil, false
		}
		cur = arr[i]
	}
	return cur, true
}

// orderedObject decodes a JSON object keeping its keys in document
// order; the form shows properties in the order the schema lists them.
// A missing object (nil) has no keys.
func orderedObject(raw json.RawMessage) ([]string, map[string]json.RawMessage, error) {
	if raw == nil {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("not an object")
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	return keys, vals, nil
}
