package schemaform

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// maxRows bounds the array indices Parse accepts, so a post cannot make
// it build a huge array from one name such as "/items/99999999".
const maxRows = 10000

// arrayIndex reads an array index token: decimal, no sign, no leading
// zero, below maxRows.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 5 || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i >= maxRows {
		return 0, false
	}
	return i, true
}

// object is a JSON object that keeps its keys in insertion order, so
// Parse and the raw JSON pane follow the schema's property order.
type object struct {
	keys []string
	vals []any
}

// set appends a key (callers never set one twice).
func (o *object) set(k string, v any) {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

// MarshalJSON writes the keys in order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// defaults is the value the schema's defaults describe: a node's own
// default, else for an object the defaults of its properties. It reports
// false when there is none.
func defaults(n *node) (any, bool) {
	if n.def != nil {
		return n.def, true
	}
	if n.kind != kindObject {
		return nil, false
	}
	o := &object{}
	for _, p := range n.props {
		if v, ok := defaults(p.node); ok {
			o.set(p.key, v)
		}
	}
	return o, len(o.keys) > 0
}

// decode reads a JSON document with numbers kept as their text.
func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// canonical is the compact JSON of a decoded value, used to compare an
// enum member with the current value.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
