package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/runner/wftoken"
	"github.com/windforce/windforce/spine"
)

// TestSuperseded: a coalesced job reads its generation and, once a newer
// request for its key arrived, superseded_by, with its own WF_TOKEN in one
// call (GET …/jobs/{id}/superseded) and in the job view; another job's
// check is refused to it.
func TestSuperseded(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		run := "/api/w/ws/jobs/run/hello/greet?coalesce_key=order-7"
		first := e.call("POST", run, adminToken, `{"name":"A"}`).want(201).obj()["id"].(string)
		if again := e.call("POST", run, adminToken, `{"name":"B"}`).want(201).obj()["id"].(string); again != first {
			t.Fatalf("second request made job %s, want it folded into %s", again, first)
		}
		claimed, err := e.db.Claim(t.Context(), spine.ClaimParams{Worker: "test", Tags: []string{"default"}, Limit: 1})
		if err != nil || len(claimed) != 1 || claimed[0].ID.String() != first {
			t.Fatalf("claim: %v %v", claimed, err)
		}
		tok, err := wftoken.Mint(secret, wftoken.Claims{JobID: claimed[0].ID, Workspace: "ws",
			ClaimToken: claimed[0].ClaimToken, Expiry: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		check := "/api/w/ws/jobs/" + first + "/superseded"
		got := e.call("GET", check, tok, "").want(200).obj()
		if got["generation"] != json.Number("2") || got["superseded"] != false || got["superseded_by"] != nil || got["id"] != first {
			t.Fatalf("check before a newer request: %v, want generation 2, not superseded", got)
		}
		if v := e.call("GET", "/api/w/ws/jobs/"+first, tok, "").want(200).obj(); v["generation"] != json.Number("2") || v["superseded_by"] != nil {
			t.Fatalf("job view before a newer request: generation %v superseded_by %v", v["generation"], v["superseded_by"])
		}

		newer := e.call("POST", run, adminToken, `{"name":"C"}`).want(201).obj()["id"].(string)
		if newer == first {
			t.Fatal("a request while the keyed job runs was folded into it")
		}
		got = e.call("GET", check, tok, "").want(200).obj()
		if got["superseded"] != true || got["superseded_by"] != newer || got["generation"] != json.Number("2") {
			t.Fatalf("check after a newer request: %v, want superseded by %s", got, newer)
		}
		if v := e.call("GET", "/api/w/ws/jobs/"+first, adminToken, "").want(200).obj(); v["superseded_by"] != newer {
			t.Fatalf("job view superseded_by %v, want %s", v["superseded_by"], newer)
		}
		if v := e.call("GET", "/api/w/ws/jobs/"+newer, adminToken, "").want(200).obj(); v["superseded_by"] != nil || v["generation"] != json.Number("1") {
			t.Fatalf("newest job: superseded_by %v generation %v, want null and 1", v["superseded_by"], v["generation"])
		}
		e.call("GET", "/api/w/ws/jobs/"+newer+"/superseded", tok, "").wantError(403, "forbidden")
		e.call("GET", "/api/w/ws/jobs/"+uuid.NewString()+"/superseded", adminToken, "").wantError(404, "not_found")
	})
}
