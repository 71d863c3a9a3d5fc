package server

import (
	"net/http"
)

// requeueJob answers 201 {"id":new,"requeued_from":old}: the waiting job is
// canceled, its reason naming the new job, and the new one pins the catalog
// as it is now (DESIGN §4). 409 for a running or finished job; an input the
// current schema refuses is 422. Either refusal writes nothing. The store
// does it in one transaction (catalog.Requeuer); the Enqueuer counts it.
func (s *Server) requeueJob(_ http.ResponseWriter, r *http.Request, c *caller) (any, error) {
	id, err := jobID(r)
	if err != nil {
		return nil, err
	}
	res, err := s.enq.Requeue(r.Context(), r.PathValue("ws"), id, c.name())
	if err != nil {
		return nil, err
	}
	return &reply{status: http.StatusCreated, body: map[string]any{
		"id": res.ID.String(), "requeued_from": id.String()}}, nil
}
