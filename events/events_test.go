package events

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// TestEncodeCloudEvent checks every attribute of the CloudEvents 1.0
// structured JSON form (DESIGN §9).
func TestEncodeCloudEvent(t *testing.T) {
	id := uuid.Must(uuid.NewV7())
	at := time.Date(2026, 12, 1, 16, 20, 1, 123456000, time.FixedZone("x", 3600))
	e := Event{Seq: 7, ID: id, Workspace: "acme", Type: JobSucceeded, Subject: "job-1", Time: at,
		Data: json.RawMessage(`{"id":"job-1","status":"success"}`)}
	b, err := e.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	want := map[string]any{
		"specversion": "1.0", "id": id.String(), "source": "windforce/acme", "type": "windforce.job.succeeded",
		"time": "2026-12-01T15:20:01.123456Z", "subject": "job-1", "datacontenttype": "application/json",
		"data": map[string]any{"id": "job-1", "status": "success"},
	}
	if len(got) != len(want) {
		t.Fatalf("attributes %v, want %v", got, want)
	}
	for k, v := range want {
		gb, _ := json.Marshal(got[k])
		wb, _ := json.Marshal(v)
		if string(gb) != string(wb) {
			t.Errorf("%s = %s, want %s", k, gb, wb)
		}
	}
}

// TestNoDataIsNull: an event without data still encodes valid JSON.
func TestNoDataIsNull(t *testing.T) {
	b, err := Event{ID: uuid.Must(uuid.NewV7()), Workspace: "w", Type: JobQueued}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var ce CloudEvent
	if err := json.Unmarshal(b, &ce); err != nil || string(ce.Data) != "null" {
		t.Fatalf("decode %s: %v, data %s", b, err, ce.Data)
	}
}

// TestTypes: every type is valid and the terminal statuses map to theirs.
func TestTypes(t *testing.T) {
	for _, k := range Types {
		if !k.Valid() {
			t.Errorf("%s not valid", k)
		}
	}
	if Type("job.exploded").Valid() {
		t.Error("unknown type valid")
	}
	for st, want := range map[spine.Status]Type{
		spine.StatusSuccess: JobSucceeded, spine.StatusFailure: JobFailed, spine.StatusCanceled: JobCanceled,
		spine.StatusQueued: "", spine.StatusRunning: "",
	} {
		if got := Finished(st); got != want {
			t.Errorf("Finished(%s) = %q, want %q", st, got, want)
		}
	}
}

// TestGlance reads both data shapes: a job's (error an object, or null)
// and a source's (error a string).
func TestGlance(t *testing.T) {
	for _, c := range []struct {
		data string
		want Glance
		ok   bool
	}{
		{`{"app":"hello","action":"greet","status":"failure","commit_sha":"c","error":{"message":"boom","code":1}}`,
			Glance{App: "hello", Action: "greet", Status: "failure", Error: "boom"}, true},
		{`{"app":"hello","action":"greet","status":"queued","error":null}`, Glance{App: "hello", Action: "greet", Status: "queued"}, true},
		{`{"id":"main","commit":"abc","error":"validate failed at commit def: bad"}`,
			Glance{Commit: "abc", Error: "validate failed at commit def: bad"}, true},
		{`{"id":"main","commit":"abc","error":""}`, Glance{Commit: "abc"}, true},
		{`[1]`, Glance{}, false},
		{`null`, Glance{}, true},
	} {
		if got, ok := GlanceOf(json.RawMessage(c.data)); got != c.want || ok != c.ok {
			t.Errorf("GlanceOf(%s) = %+v, %v; want %+v, %v", c.data, got, ok, c.want, c.ok)
		}
	}
}
