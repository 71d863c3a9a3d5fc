package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/windforce/windforce/events"
	"github.com/windforce/windforce/spine"
)

// CompleteBatch completes many owned jobs in one BEGIN IMMEDIATE
// transaction on the pool (so one commit for the whole batch), each exactly
// as Complete would: fenced on its own claim token, finished canceled when
// it carries the cancel mark, with its log tail appended. A lost lease gets the empty status and writes
// nothing; any other failure rolls the whole batch back
// (driver.QueueExecutor).
//
// The batch is three statements whatever its size (finish_batch,
// finish_batch_delete, runtime_delete_many), not three per job: on the one
// writer connection each statement's fixed cost bounds throughput.
func (e *executor) CompleteBatch(ctx context.Context, cs []spine.CompleteParams) ([]spine.Status, error) {
	statuses := make([]spine.Status, len(cs))
	if len(cs) == 0 {
		return statuses, nil
	}
	arg, err := batchLeases(cs)
	if err != nil {
		return nil, err
	}
	err = e.write(ctx, func(w *writeTx) error {
		if err := w.appendTails(ctx, cs); err != nil {
			return err
		}
		done, err := w.finishBatch(ctx, arg)
		if err != nil || len(done) == 0 {
			return err
		}
		ids := make([]uuid.UUID, 0, len(done))
		finished := make(map[uuid.UUID]finishedJob, len(done))
		for id, f := range done {
			ids = append(ids, id)
			finished[id] = f
		}
		idList := idsJSON(ids) // one encoding for both statements
		tokens, err := w.removeBatch(ctx, idList)
		if err != nil {
			return err
		}
		for k, c := range cs {
			if f, ok := done[c.JobID]; ok && tokens[c.JobID] == c.ClaimToken {
				delete(done, c.JobID) // a lease named twice completes once
				statuses[k] = f.status
			}
		}
		if _, err := w.exec(ctx, qRuntimeDeleteMany, sql.Named("ids", idList)); err != nil {
			return fmt.Errorf("delete runtime rows: %w", err)
		}
		// The batch's events, each by the status written and at its job's
		// completion time, in job id order as on Postgres.
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
		if err := w.finishedEvents(ctx, ids, finished); err != nil {
			return err
		}
		for _, id := range ids {
			w.finishedWith(finished[id].wakeUp(id)) // sent after commit
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return statuses, nil
}

// appendTails appends the log tail of each of cs that has one, fenced on
// its lease like finish_batch, which runs after it on the same writer: a
// lease that appended finishes, one that did not append finds no row.
func (w *writeTx) appendTails(ctx context.Context, cs []spine.CompleteParams) error {
	for _, c := range cs {
		if c.LogTail == "" {
			continue
		}
		_, err := w.exec(ctx, qAppendLog, sql.Named("id", c.JobID), sql.Named("token", c.ClaimToken),
			sql.Named("data", c.LogTail), sql.Named("now", micros(resolveNow(c.Now))))
		if err != nil {
			return fmt.Errorf("append the log tail of job %s: %w", c.JobID, translate(err))
		}
	}
	return nil
}

// batchLease is one object of finish_batch's :leases.
type batchLease struct {
	ID          uuid.UUID `json:"id"`
	Token       uuid.UUID `json:"token"`
	Result      *string   `json:"result"`
	CompletedAt int64     `json:"completed_at"`
}

// batchLeases encodes cs for finish_batch, each lease once (a repeat would
// meet the first's job_completed row). One job under several tokens stays:
// only its own token's lease matches its queue row.
func batchLeases(cs []spine.CompleteParams) (string, error) {
	leases := make([]batchLease, 0, len(cs))
	seen := make(map[spine.Lease]bool, len(cs))
	for _, c := range cs {
		if seen[c.Lease] {
			continue
		}
		seen[c.Lease] = true
		l := batchLease{ID: c.JobID, Token: c.ClaimToken, CompletedAt: micros(resolveNow(c.Now))}
		if len(c.Result) > 0 {
			r := string(c.Result)
			l.Result = &r
		}
		leases = append(leases, l)
	}
	b, err := json.Marshal(leases)
	if err != nil {
		return "", fmt.Errorf("encode leases: %w", err)
	}
	return string(b), nil
}

// finishedJob is what finish_batch recorded of one job, with its finished
// event and whether its workspace records it.
type finishedJob struct {
	status    spine.Status
	workspace string
	event     jobEventState
	recorded  bool
}

// wakeUp is the completion wake-up of job id finished as f: a success
// carries its result as GetJob reads it (the text stored).
func (f finishedJob) wakeUp(id uuid.UUID) spine.Finished {
	if f.status != spine.StatusSuccess {
		return spine.Finished{ID: id}
	}
	return spine.Finished{ID: id, Status: f.status, Result: nullJSON(f.event.result)}
}

// finishBatch records the jobs whose lease still matches and returns their
// statuses and workspaces by job id.
func (w *writeTx) finishBatch(ctx context.Context, leases string) (map[uuid.UUID]finishedJob, error) {
	rows, err := w.query(ctx, qFinishBatch, sql.Named("leases", leases))
	if err != nil {
		return nil, fmt.Errorf("record completions: %w", translate(err))
	}
	defer rows.Close()
	done := map[uuid.UUID]finishedJob{}
	for rows.Next() {
		var f finishedJob
		ev := &f.event
		if err := rows.Scan(&ev.id, &ev.status, &f.workspace, &ev.result, &ev.errorJSON, &ev.startedAt,
			&ev.completedAt, &ev.worker, &ev.attempt, &ev.restarts, &ev.canceledBy, &ev.canceledReason,
			&f.recorded); err != nil {
			return nil, fmt.Errorf("record completions: %w", err)
		}
		f.status = spine.Status(ev.status)
		ev.typ, ev.at = string(events.Finished(f.status)), ev.completedAt.Int64
		done[ev.id] = f
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("record completions: %w", translate(err))
	}
	return done, nil
}

// removeBatch deletes the queue rows of ids (a JSON array) and returns the
// claim token each was running under.
func (w *writeTx) removeBatch(ctx context.Context, ids string) (map[uuid.UUID]uuid.UUID, error) {
	rows, err := w.query(ctx, qFinishBatchDelete, sql.Named("ids", ids))
	if err != nil {
		return nil, fmt.Errorf("remove queue rows: %w", translate(err))
	}
	tokens, err := collect(rows, func(rows *sql.Rows) ([2]uuid.UUID, error) {
		var r [2]uuid.UUID
		return r, rows.Scan(&r[0], &r[1])
	})
	if err != nil {
		return nil, fmt.Errorf("remove queue rows: %w", translate(err))
	}
	byID := make(map[uuid.UUID]uuid.UUID, len(tokens))
	for _, r := range tokens {
		byID[r[0]] = r[1]
	}
	return byID, nil
}

// finishedEvents writes the finished events of ids (in that order) whose
// workspaces record them, one outbox row per workspace, from what
// finish_batch returned and their job rows (events_finished.sql): the
// job_event view's state once the queue row is gone (no scheduled_for,
// no last_error).
func (w *writeTx) finishedEvents(ctx context.Context, ids []uuid.UUID, done map[uuid.UUID]finishedJob) error {
	var recorded []uuid.UUID
	for _, id := range ids {
		if done[id].recorded {
			recorded = append(recorded, id)
		}
	}
	if len(recorded) == 0 {
		return nil
	}
	rows, err := w.query(ctx, qEventsFinished, sql.Named("ids", idsJSON(recorded)))
	if err != nil {
		return fmt.Errorf("read finished jobs: %w", translate(err))
	}
	evs := make([]jobEventState, len(recorded))
	found := make([]bool, len(recorded))
	err = scanRows(rows, func(rows *sql.Rows) error {
		var k int
		var j jobEventState
		if err := rows.Scan(&k, &j.priority, &j.generation, &j.secrets, &j.supersededBy); err != nil {
			return err
		}
		if k < 0 || k >= len(evs) {
			return fmt.Errorf("place %d of %d", k, len(evs))
		}
		ev := done[recorded[k]].event
		ev.priority, ev.generation, ev.secrets, ev.supersededBy = j.priority, j.generation, j.secrets, j.supersededBy
		evs[k], found[k] = ev, true
		return nil
	})
	if err != nil {
		return fmt.Errorf("read finished jobs: %w", translate(err))
	}
	byWorkspace := map[string][]jobEventState{}
	var order []string
	for k, id := range recorded {
		if !found[k] {
			return fmt.Errorf("read finished jobs: job %s has no job row", id)
		}
		ws := done[id].workspace
		if _, ok := byWorkspace[ws]; !ok {
			order = append(order, ws)
		}
		byWorkspace[ws] = append(byWorkspace[ws], evs[k])
	}
	for _, ws := range order {
		if err := w.jobRowEvents(ctx, ws, byWorkspace[ws]); err != nil {
			return err
		}
	}
	return nil
}
