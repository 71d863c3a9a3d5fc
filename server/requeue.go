package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// requeuer is the store side of POST …/jobs/{id}/requeue: cancel a waiting
// job and enqueue its input again through the one enqueue path, in one
// transaction. store/postgres and store/sqlite implement it.
type requeuer interface {
	Requeue(ctx context.Context, workspace string, id uuid.UUID, actor string) (spine.EnqueueResult, error)
}

// requeueJob answers 201 {"id":new,"requeued_from":old}: the waiting job is
// canceled, its reason naming the new job, and the new one pins the catalog
// as it is now (DESIGN §4). 409 for a running or finished job; an input the
// current schema refuses is 422. Either refusal writes nothing.
func (s *Server) requeueJob(_ http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	id, err := jobID(r)
	if err != nil {
		return nil, err
	}
	rq, ok := s.cfg.Store.(requeuer)
	if !ok {
		return nil, errors.New("requeue: the store does not implement Requeue")
	}
	res, err := rq.Requeue(r.Context(), r.PathValue("ws"), id, c.name())
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: map[string]any{
		"id": res.ID.String(), "requeued_from": id.String()}}, nil
}
