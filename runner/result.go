package runner

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/runner/sandbox"
	"github.com/windforce/windforce/spine"
)

// maxErrorBytes bounds the error file a wrapper writes.
const maxErrorBytes = 256 << 10

// Failure is a job that ran and failed: a throw or exception (with its
// stack), a non-zero exit, or a result that cannot be accepted. Its Error
// is the message stored as the job's error.
type Failure struct {
	Message string
	Stack   string
	Kind    string
}

// Error is the failure's message.
func (f *Failure) Error() string { return f.Message }

// JobError is the failure as the spine stores it.
func (f *Failure) JobError() spine.JobError {
	return spine.JobError{Message: f.Message, Stack: f.Stack, Kind: f.Kind}
}

// outcome reads what the process left: how it ended (out of memory
// first), the wrapper's error file, or the result file (checked for
// size, JSON and output schema). The files are read as readJobFile
// allows, whatever the job made of them.
func (r *Runner) outcome(job *spine.ClaimedJob, rt runtimeSpec, jd *jobDir, exit sandbox.Exit, lastLine string) (json.RawMessage, error) {
	if exit.OOM {
		return nil, exitFailure(exit, "")
	}
	f, err := readErrorFile(jd.errFile)
	if err != nil {
		return nil, err
	}
	if f != nil {
		return nil, f
	}
	if !exit.Success() {
		return nil, exitFailure(exit, lastLine)
	}
	res, err := r.readResult(jd.result, rt)
	if err != nil {
		return nil, err
	}
	if err := validateOutput(job.Pin.OutputSchema, res); err != nil {
		return nil, err
	}
	return res, nil
}

// exitFailure is a job whose process ended without an answer: out of
// memory, or its exit status with the last line it wrote.
func exitFailure(exit sandbox.Exit, lastLine string) *Failure {
	if exit.OOM {
		return &Failure{Message: exit.String(), Kind: "out_of_memory"}
	}
	f := &Failure{Message: exit.String(), Kind: "exit"}
	if lastLine != "" {
		f.Message += ": " + lastLine
	}
	return f
}

// readErrorFile reads {"message","stack"} written by a wrapper; a file
// that is not a regular one is the job's failure.
func readErrorFile(path string) (*Failure, error) {
	data, err := readJobFile(path, maxErrorBytes)
	if errors.Is(err, errNoJobFile) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e struct{ Message, Stack string }
	if json.Unmarshal(data, &e) != nil {
		return nil, nil // not the wrapper's: the exit status tells
	}
	return &Failure{Message: e.Message, Stack: e.Stack, Kind: "error"}, nil
}

// readResult reads the result file: at most MaxResultBytes, valid JSON. A
// command that wrote nothing returns null.
func (r *Runner) readResult(path string, rt runtimeSpec) (json.RawMessage, error) {
	data, err := readJobFile(path, r.cfg.MaxResultBytes)
	if errors.Is(err, errNoJobFile) {
		if rt.name == "command" {
			return json.RawMessage("null"), nil
		}
		return nil, &Failure{Message: "the runtime wrote no result", Kind: "invalid_result"}
	}
	if err != nil {
		return nil, err
	}
	return acceptResult(data, rt)
}

// acceptResult checks a result the runtime gave (within the size limit
// already): acceptable JSON, compacted.
func acceptResult(data []byte, rt runtimeSpec) (json.RawMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 && rt.name == "command" {
		return json.RawMessage("null"), nil
	}
	res, err := spine.CheckResult(data)
	if err != nil {
		return nil, &Failure{Message: "result is not acceptable JSON: " + err.Error(), Kind: "invalid_result"}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, res); err != nil {
		return nil, &Failure{Message: "result is not valid JSON: " + err.Error(), Kind: "invalid_result"}
	}
	return compact.Bytes(), nil
}

// validateOutput checks the result against the pinned output schema.
func validateOutput(schema, result json.RawMessage) error {
	trimmed := bytes.TrimSpace(schema)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil
	}
	sch, err := catalog.CompiledSchema(schema)
	if err != nil {
		return &Failure{Message: "output schema: " + err.Error(), Kind: "invalid_result"}
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(result))
	if err != nil {
		return &Failure{Message: "result is not valid JSON: " + err.Error(), Kind: "invalid_result"}
	}
	if err := sch.Validate(v); err != nil {
		return &Failure{Message: "result does not match the output schema: " + flatten(err), Kind: "invalid_result"}
	}
	return nil
}

// flatten lists a validation error's leaf causes as "pointer: message".
func flatten(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var parts []string
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		ptr := u.InstanceLocation
		if ptr == "" {
			ptr = "(root)"
		}
		parts = append(parts, ptr+": "+u.Error.String())
	}
	if len(parts) == 0 {
		return ve.Error()
	}
	return joinUnique(parts)
}

func joinUnique(parts []string) string {
	seen := map[string]bool{}
	var b bytes.Buffer
	for _, p := range parts {
		if seen[p] {
			continue
		}
		seen[p] = true
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p)
	}
	return b.String()
}
