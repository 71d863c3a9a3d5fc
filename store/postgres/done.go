package postgres

import (
	"strings"

	"github.com/google/uuid"
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

// parseDone reads a completion payload: job ids separated by commas. An
// id that does not parse is skipped (no waiter can be waiting on it).
func parseDone(payload string) []uuid.UUID {
	ids := make([]uuid.UUID, 0, strings.Count(payload, ",")+1)
	for part := range strings.SplitSeq(payload, ",") {
		if id, err := uuid.Parse(part); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}
