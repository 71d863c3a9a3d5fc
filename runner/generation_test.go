package runner

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/windforce/windforce/spine"
)

// TestCtxGeneration runs a bun job that three requests were coalesced
// into: its ctx.generation is 3, what it compares with superseded_by
// before writing side effects.
func TestCtxGeneration(t *testing.T) {
	t.Parallel()
	requireBun(t)
	h := setup(t, harnessOpts{})
	h.putFixture("apps/bun", "c-gen", nil)
	pin := spine.Pin{GitSourceID: "src", CommitSHA: "c-gen", AppKey: "app", ActionKey: "generation",
		Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: spine.DefaultTag}
	req := func(n string) spine.EnqueueParams {
		return spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerAPI, Pin: pin,
			CoalesceKey: "k", Input: json.RawMessage(`{"n":` + n + `}`)}
	}
	// One batch: the worker cannot claim between the requests.
	res, err := h.store.EnqueueBatch(context.Background(), []spine.EnqueueParams{req("1"), req("2"), req("3")})
	if err != nil {
		t.Fatal(err)
	}
	if res[2].ID != res[0].ID || res[2].Generation != 3 {
		t.Fatalf("batch of three coalesced requests: %+v, want one job at generation 3", res)
	}
	j := h.wait(res[0].ID, 60*time.Second)
	if j.Status != spine.StatusSuccess || string(j.Result) != `{"generation":3}` {
		t.Fatalf("job %s result %s (error %+v), want {\"generation\":3}", j.Status, j.Result, j.Error)
	}
	if j.Generation != 3 {
		t.Fatalf("finished job generation %d, want 3", j.Generation)
	}
}

// TestEnvGeneration: a command job reads its generation from
// $WF_GENERATION, as a bun job reads ctx.generation.
func TestEnvGeneration(t *testing.T) {
	t.Parallel()
	h := setup(t, harnessOpts{})
	h.putFixture("apps/command", "c-envgen", map[string]string{
		"gen.sh": "#!/bin/sh\nprintf '{\"generation\":%s}' \"$WF_GENERATION\" >\"$WF_RESULT\"\n",
	})
	pin := spine.Pin{GitSourceID: "src", CommitSHA: "c-envgen", AppKey: "app", ActionKey: "gen",
		Entrypoint: "gen.sh", Runtime: "command", Timeout: time.Minute, Tag: spine.DefaultTag}
	req := func(n string) spine.EnqueueParams {
		return spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerAPI, Pin: pin,
			CoalesceKey: "k", Input: json.RawMessage(`{"n":` + n + `}`)}
	}
	res, err := h.store.EnqueueBatch(context.Background(), []spine.EnqueueParams{req("1"), req("2")})
	if err != nil {
		t.Fatal(err)
	}
	j := h.wait(res[0].ID, 60*time.Second)
	if j.Status != spine.StatusSuccess || string(j.Result) != `{"generation":2}` && string(j.Result) != `{"generation": 2}` {
		t.Fatalf("job %s result %s (error %+v), want {\"generation\":2}", j.Status, j.Result, j.Error)
	}
}
