package spine

import (
	"encoding/json"
	"errors"
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

// FailBatchPlan is the part of a FailBatch every store does the same way:
// each job error is encoded, and a lease repeated in the batch is answered
// as a second Fail of it would be (ErrNotOwner).
type FailBatchPlan struct {
	// Outcomes has one entry per request, in order; entries already
	// decided carry their Err.
	Outcomes []FailBatchOutcome
	// Todo lists the indexes of the requests the store must write.
	Todo []int
	// Errors holds the encoded job error of each request in Todo.
	Errors []string
}

// PlanFailBatch encodes the errors of a FailBatch and decides the requests
// that need no database work.
func PlanFailBatch(ps []FailParams) FailBatchPlan {
	plan := FailBatchPlan{
		Outcomes: make([]FailBatchOutcome, len(ps)),
		Errors:   make([]string, len(ps)),
		Todo:     make([]int, 0, len(ps)),
	}
	seen := make(map[Lease]bool, len(ps))
	for i, p := range ps {
		plan.Outcomes[i].JobID = p.JobID
		encoded, err := p.Error.Encode()
		switch {
		case err != nil:
			plan.Outcomes[i].Err = fmt.Errorf("fail job %s: %w: %w", p.JobID, ErrInvalid, err)
		case seen[p.Lease]:
			plan.Outcomes[i].Err = fmt.Errorf("fail job %s: repeated in the batch: %w", p.JobID, ErrNotOwner)
		default:
			seen[p.Lease] = true
			plan.Errors[i] = encoded
			plan.Todo = append(plan.Todo, i)
		}
	}
	return plan
}

// Write runs fail for each request the store must write, inside the
// store's one transaction, and records its outcome. A lost lease is that
// job's outcome; any other error is returned and fails the whole batch (the
// store then writes nothing).
func (plan *FailBatchPlan) Write(ps []FailParams, fail func(p FailParams, jobErr string) (FailOutcome, error)) error {
	for _, i := range plan.Todo {
		p := ps[i]
		out, err := fail(p, plan.Errors[i])
		switch {
		case errors.Is(err, ErrNotOwner):
			plan.Outcomes[i] = FailBatchOutcome{JobID: p.JobID, Err: fmt.Errorf("fail job %s: %w", p.JobID, err)}
		case err != nil:
			return fmt.Errorf("job %s: %w", p.JobID, err)
		default:
			plan.Outcomes[i] = FailBatchOutcome{JobID: p.JobID, FailOutcome: out}
		}
	}
	return nil
}
