package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
)

// LargeSchema is a JSON schema of at least size bytes: an object whose
// properties listed in required must be present, among many optional
// string properties whose descriptions are a hash chain started by seed.
// The descriptions differ from each other, so the schema compresses about
// as badly as a real bundled schema and a store keeping one copy per job
// shows in its size; different seeds give different schemas.
func LargeSchema(seed string, size int, required ...string) json.RawMessage {
	req, err := json.Marshal(append([]string{}, required...))
	if err != nil {
		panic(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"object","required":%s,"properties":{`, req)
	for i, name := range required {
		fmt.Fprintf(&b, `%q:{"type":"string","description":"required %d"},`, name, i)
	}
	sum := sha256.Sum256([]byte(seed))
	for i := 0; b.Len() < size; i++ {
		sum = sha256.Sum256(sum[:])
		fmt.Fprintf(&b, `"p%06d":{"type":"string","description":"%s"},`, i, hex.EncodeToString(sum[:]))
	}
	return json.RawMessage(strings.TrimSuffix(b.String(), ",") + "}}")
}

// testPinnedSchemas checks that a store keeping one copy of each pinned
// schema (whatever its layout) still answers every job with the schemas it
// pinned: GetJob, ListJobs and the claim that the worker validates output
// with, for jobs enqueued one by one and in batches, sharing a large schema
// or not, and after a sweep removed every other job that used it. (The
// stores' own tests check that a shared schema is stored once.)
func testPinnedSchemas(t *testing.T, newStore newStoreFunc) {
	t.Run("LargeSharedSchema", func(t *testing.T) { t.Parallel(); testLargeSharedSchema(t, newStore) })
	t.Run("DistinctSchemas", func(t *testing.T) { t.Parallel(); testDistinctSchemas(t, newStore) })
	t.Run("SchemaOutlivesSweep", func(t *testing.T) { t.Parallel(); testSchemaOutlivesSweep(t, newStore) })
}

// bigPin is the full pin with ≥ 1 MiB input and output schemas; the output
// schema requires "greeting".
func bigPin() spine.Pin {
	pin := fullPin()
	pin.InputSchema = LargeSchema("input", 1<<20, "name")
	pin.OutputSchema = LargeSchema("output", 1<<20, "greeting")
	return pin
}

func withPin(pin spine.Pin) jobOption { return func(p *spine.EnqueueParams) { p.Pin = pin } }

func testLargeSharedSchema(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	pin := bigPin()
	var ids []uuid.UUID
	for range 5 {
		ids = append(ids, b.enqueue(withPin(pin)))
	}
	ids = append(ids, b.enqueueN(5, withPin(pin))...)
	first := b.get(ids[0]).Pin
	requirePin(t, "GetJob of a job with large schemas", first, pin)
	for _, id := range ids[1:] {
		requireSamePin(t, "GetJob of a job sharing them", b.get(id).Pin, first)
	}
	listed, err := b.store.ListJobs(b.ctx, spine.ListJobsParams{Workspace: testWorkspace, Limit: 3})
	if err != nil || len(listed) != 3 {
		t.Fatalf("ListJobs: %d jobs, %v; want 3", len(listed), err)
	}
	for _, j := range listed {
		requireSamePin(t, "ListJobs", j.Pin, first)
	}
	claimed := b.claim(spine.ClaimParams{Limit: len(ids)})
	if len(claimed) != len(ids) {
		t.Fatalf("claimed %d of %d jobs", len(claimed), len(ids))
	}
	for _, c := range claimed {
		requireSamePin(t, "Claim", c.Pin, first)
	}
	requireOutputValidation(t, claimed[0].Pin.OutputSchema)
	b.complete(lease(claimed[0]), b.clock.Now())
	requireSamePin(t, "GetJob of a completed job", b.get(claimed[0].ID).Pin, first)
}

// requireSamePin requires got to be the pin first was read back as, to the
// byte: cheaper than decoding large schemas again for every job.
func requireSamePin(t *testing.T, what string, got, first spine.Pin) {
	t.Helper()
	if !bytes.Equal(got.InputSchema, first.InputSchema) || !bytes.Equal(got.OutputSchema, first.OutputSchema) {
		t.Fatalf("%s: schemas differ from the first job's (%d and %d bytes, want %d and %d)", what,
			len(got.InputSchema), len(got.OutputSchema), len(first.InputSchema), len(first.OutputSchema))
	}
	got.InputSchema, got.OutputSchema = first.InputSchema, first.OutputSchema
	requirePin(t, what, got, first)
}

// requireOutputValidation checks what the worker does with a claimed
// output schema: it compiles, passes a result with "greeting" and refuses
// one without.
func requireOutputValidation(t *testing.T, schema json.RawMessage) {
	t.Helper()
	sch, err := catalog.CompileSchema(schema)
	if err != nil {
		t.Fatalf("claimed output schema does not compile: %v", err)
	}
	for result, ok := range map[string]bool{`{"greeting":"hi"}`: true, `{"name":"x"}`: false} {
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(result))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); (err == nil) != ok {
			t.Fatalf("result %s against the claimed output schema: %v, want valid=%v", result, err, ok)
		}
	}
}

// testDistinctSchemas enqueues, in one batch and one by one, jobs whose
// schemas differ, are equal to each other, or are absent, and requires each
// to read back its own.
func testDistinctSchemas(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	same := json.RawMessage(`{"type":"object","required":["greeting"]}`)
	pins := map[string]spine.Pin{}
	for name, schemas := range map[string][2]json.RawMessage{
		"full":       {fullPin().InputSchema, fullPin().OutputSchema},
		"none":       {nil, nil},
		"input only": {json.RawMessage(`{"type":"object","title":"in only"}`), nil},
		"same twice": {same, same},
		"other":      {json.RawMessage(`{"type":"array"}`), json.RawMessage(`{"type":"string"}`)},
	} {
		pin := fullPin()
		pin.InputSchema, pin.OutputSchema = schemas[0], schemas[1]
		pins[name] = pin
	}
	want := map[uuid.UUID]spine.Pin{}
	var batch []spine.EnqueueParams
	for _, pin := range pins {
		want[b.enqueue(withPin(pin))] = pin
		p := b.params(withPin(pin))
		p.ID = uuid.Must(uuid.NewV7())
		want[p.ID] = pin
		batch = append(batch, p)
	}
	if _, err := b.store.EnqueueBatch(b.ctx, batch); err != nil {
		t.Fatalf("EnqueueBatch: %v", err)
	}
	for id, pin := range want {
		j := b.get(id)
		requirePin(t, "GetJob", j.Pin, pin)
		if (len(pin.InputSchema) == 0) != (len(j.Pin.InputSchema) == 0) ||
			(len(pin.OutputSchema) == 0) != (len(j.Pin.OutputSchema) == 0) {
			t.Fatalf("GetJob: schemas %q, %q; want %q, %q", j.Pin.InputSchema, j.Pin.OutputSchema, pin.InputSchema, pin.OutputSchema)
		}
	}
	for _, c := range b.claim(spine.ClaimParams{Limit: len(want)}) {
		requirePin(t, "Claim", c.Pin, want[c.ID])
	}
}

// testSchemaOutlivesSweep sweeps finished jobs that shared a schema with a
// job still waiting and with one finished recently, and then enqueues the
// schema again: every remaining and new job still has it.
func testSchemaOutlivesSweep(t *testing.T, newStore newStoreFunc) {
	b := setup(t, newStore)
	pin := fullPin()
	pin.InputSchema = LargeSchema("sweep", 4<<10, "name")
	old := b.clock.Now()
	b.enqueueN(3, withPin(pin), withNow(old))
	for _, c := range b.claim(spine.ClaimParams{Limit: 3, Now: old}) {
		b.complete(lease(c), old)
	}
	later := pin
	later.Tag = "later"
	waiting := b.enqueue(withPin(later), withNow(old))
	now := b.clock.Advance(30 * 24 * time.Hour)
	recent := b.enqueue(withPin(pin))
	b.complete(lease(b.claimOne(now)), now)
	if n, err := b.store.Sweep(b.ctx, spine.SweepParams{Before: now.Add(-time.Hour)}); err != nil || n != 3 {
		t.Fatalf("Sweep: %d jobs, %v; want 3", n, err)
	}
	requirePin(t, "a waiting job after the sweep", b.get(waiting).Pin, later)
	requirePin(t, "a recent finished job after the sweep", b.get(recent).Pin, pin)
	again := b.enqueue(withPin(pin))
	requirePin(t, "a job enqueued after the sweep", b.get(again).Pin, pin)
	requirePin(t, "its claim", b.claimOne(now).Pin, pin)
}
