package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrInvalidInput is matched (errors.Is) by every *InputError.
var ErrInvalidInput = errors.New("input does not match the action's input schema")

// FieldError is one reason an input was refused: where (a JSON pointer
// into the input, "" for the whole input) and why.
type FieldError struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// InputError is a refused input with every reason found. The API answers
// it with 422 and the fields as details.
type InputError struct {
	Fields []FieldError
}

// Error lists the reasons, each with its JSON pointer.
func (e *InputError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		ptr := f.Pointer
		if ptr == "" {
			ptr = "(root)"
		}
		parts[i] = ptr + ": " + f.Message
	}
	return ErrInvalidInput.Error() + ": " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalidInput) true.
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }

// schemaURL is the base URL schemas compile under; it names no real place.
const schemaURL = "windforce:///schema.json"

// CompileSchema compiles a JSON Schema document. References to other
// documents are refused (no loader), so compiling never reads a file or
// the network on the server: sync bundles the files of the commit that a
// schema refers to into it (source/manifest), so a catalog schema is
// self-contained.
func CompileSchema(data []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("load schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %w", err)
	}
	return sch, nil
}

// schemaCacheSize bounds the compiled schemas kept for enqueue and results; a catalog
// holds far fewer distinct input schemas in practice.
const schemaCacheSize = 1024

// schemaCache maps a schema's bytes to its compiled form, so neither
// enqueue nor the runner recompiles the same pinned schema for every job. A compiled schema is
// immutable and safe for concurrent Validate calls.
var schemaCache struct {
	sync.Mutex
	m map[string]*jsonschema.Schema
}

// CompiledSchema returns the compiled form of schema, from the cache when
// it is there: enqueue checks every job's input, and the runner every
// result, against a pinned schema that is the same for all the jobs of an
// action (compiling it each time was a tenth of a warm job's CPU).
func CompiledSchema(schema json.RawMessage) (*jsonschema.Schema, error) {
	key := string(schema)
	schemaCache.Lock()
	sch, ok := schemaCache.m[key]
	schemaCache.Unlock()
	if ok {
		return sch, nil
	}
	sch, err := CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	schemaCache.Lock()
	defer schemaCache.Unlock()
	if schemaCache.m == nil || len(schemaCache.m) >= schemaCacheSize {
		schemaCache.m = map[string]*jsonschema.Schema{} // crude but bounded
	}
	schemaCache.m[key] = sch
	return sch, nil
}

// ValidateInput checks input against schema. An empty schema accepts
// anything; an empty input is null. A mismatch is an *InputError.
func ValidateInput(schema, input json.RawMessage) error {
	if len(bytes.TrimSpace(schema)) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
		return nil
	}
	sch, err := CompiledSchema(schema)
	if err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("null")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return &InputError{Fields: []FieldError{{Message: "input is not valid JSON: " + err.Error()}}}
	}
	err = sch.Validate(v)
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &InputError{Fields: fieldErrors(ve)}
	}
	return err
}

// fieldErrors flattens a validation error into its leaf causes, sorted
// by pointer, each once.
func fieldErrors(ve *jsonschema.ValidationError) []FieldError {
	out := ve.BasicOutput()
	seen := map[FieldError]bool{}
	var fields []FieldError
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		f := FieldError{Pointer: u.InstanceLocation, Message: u.Error.String()}
		if !seen[f] {
			seen[f] = true
			fields = append(fields, f)
		}
	}
	if len(fields) == 0 {
		fields = []FieldError{{Pointer: "", Message: ve.Error()}}
	}
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].Pointer < fields[j].Pointer })
	return fields
}
