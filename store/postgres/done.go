package postgres

import (
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// doneChunk is how many job ids one completion notification carries: 200
// ids of 36 characters and their commas are 7,399 bytes, under Postgres's
// 8,000-byte payload limit. complete_batch.sql and reap_finish.sql chunk
// by the same number in SQL.
const doneChunk = 200

// donePayloads splits ids into completion payloads (comma-separated ids,
// at most doneChunk each) for notify.sql; parseDone reads them back.
func donePayloads(ids []uuid.UUID) []string {
	payloads := make([]string, 0, (len(ids)+doneChunk-1)/doneChunk)
	for len(ids) > 0 {
		n := min(len(ids), doneChunk)
		var b strings.Builder
		b.Grow(n * 37)
		for i, id := range ids[:n] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(id.String())
		}
		payloads = append(payloads, b.String())
		ids = ids[n:]
	}
	return payloads
}

// parseDone reads a completion payload: lines (complete_batch.sql) of
// one job each, its id and, for a success whose result is small, a space
// and the result as job_completed holds it; or (every other payload) job
// ids separated by commas. An id that does not parse is skipped (no
// waiter can be waiting on it).
func parseDone(payload string) []spine.Finished {
	out := make([]spine.Finished, 0, strings.Count(payload, ",")+strings.Count(payload, "\n")+1)
	for line := range strings.SplitSeq(payload, "\n") {
		if len(line) > uuidText && line[uuidText] == ' ' {
			if id, err := uuid.Parse(line[:uuidText]); err == nil {
				out = append(out, spine.Finished{ID: id, Status: spine.StatusSuccess, Result: json.RawMessage(line[uuidText+1:])})
			}
			continue
		}
		for part := range strings.SplitSeq(line, ",") {
			if id, err := uuid.Parse(part); err == nil {
				out = append(out, spine.Finished{ID: id})
			}
		}
	}
	return out
}

// uuidText is the length of a job id in its text form.
const uuidText = 36
