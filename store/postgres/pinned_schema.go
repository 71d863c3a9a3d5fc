package postgres

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// A job's pinned schemas are stored once per content in job_schema
// (migration 0010): the job keeps the hex SHA-256 of each schema's text,
// and readers join the text back by hash. The hash is of the text as
// pinned; the catalog pins its jsonb text, which is also the stored text.
const (
	// schemaTouch is how old a job_schema row's used_at may get before an
	// enqueue pinning it moves it forward (queries/enqueue_batch.sql).
	schemaTouch = time.Hour
	// schemaGrace is how long past used_at a row unreferenced by any job
	// is kept, for enqueues still in flight (queries/sweep_schemas.sql).
	schemaGrace = 24 * time.Hour
)

var qSweepSchemas = mustQuery("sweep_schemas")

// schemaHash is the job_schema key of a schema text, nil (SQL NULL) for no
// schema.
func schemaHash(v json.RawMessage) *string {
	if len(v) == 0 {
		return nil
	}
	sum := sha256.Sum256(v)
	h := hex.EncodeToString(sum[:])
	return &h
}

// schemaSet collects a batch's distinct schema texts, each hashed once:
// twenty jobs of one action send its schema once, not twenty times.
type schemaSet struct {
	byText         map[string]*string
	hashes, bodies []string
}

// add records v and returns its hash (nil for no schema).
func (s *schemaSet) add(v json.RawMessage) *string {
	if len(v) == 0 {
		return nil
	}
	if h, ok := s.byText[string(v)]; ok {
		return h
	}
	if s.byText == nil {
		s.byText = map[string]*string{}
	}
	text, h := string(v), schemaHash(v)
	s.byText[text] = h
	s.hashes, s.bodies = append(s.hashes, *h), append(s.bodies, text)
	return h
}

// schemaArgs are the job_schema arguments of enqueue.sql for one pin.
func schemaArgs(args namedArgs, in, out json.RawMessage) {
	args["input_schema_hash"], args["input_schema"] = schemaHash(in), jsonArg(in)
	args["output_schema_hash"], args["output_schema"] = schemaHash(out), jsonArg(out)
	args["schema_touch_ms"] = schemaTouch.Milliseconds()
}
