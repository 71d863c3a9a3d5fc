package spine

import (
	"encoding/json"
	"fmt"
)

// CompleteBatchPlan is the part of a CompleteBatch every store does the
// same way: results are checked, and a lease repeated in the batch is
// answered as a second Complete of it would be (ErrNotOwner: the first one
// finished the job), so a store writes each job at most once.
type CompleteBatchPlan struct {
	// Outcomes has one entry per request, in order. Entries already decided
	// (a refused result, a repeated lease) carry their Err.
	Outcomes []CompleteOutcome
	// Todo lists the indexes of the requests the store must write.
	Todo []int
	// Results holds the checked result of each request (nil where the
	// request is not in Todo).
	Results []json.RawMessage
}

// PlanCompleteBatch checks the requests of a CompleteBatch and decides the
// ones that need no database work.
func PlanCompleteBatch(ps []CompleteParams) CompleteBatchPlan {
	plan := CompleteBatchPlan{
		Outcomes: make([]CompleteOutcome, len(ps)),
		Results:  make([]json.RawMessage, len(ps)),
		Todo:     make([]int, 0, len(ps)),
	}
	seen := make(map[Lease]bool, len(ps))
	for i, p := range ps {
		plan.Outcomes[i].JobID = p.JobID
		result, err := CheckResult(p.Result)
		switch {
		case err != nil:
			plan.Outcomes[i].Err = fmt.Errorf("complete job %s: %w", p.JobID, err)
		case seen[p.Lease]:
			plan.Outcomes[i].Err = fmt.Errorf("complete job %s: repeated in the batch: %w", p.JobID, ErrNotOwner)
		default:
			seen[p.Lease] = true
			plan.Results[i] = result
			plan.Todo = append(plan.Todo, i)
		}
	}
	return plan
}
