package sqlite

import (
	"database/sql"
	"strings"
	"testing"
)

// TestFinishBatchPlanLooksUpLeases: the fenced delete of a completion batch
// is driven by the batch (json_each) and finds each lease's queue row by its
// primary key; it never scans job_queue, whose size is the backlog.
func TestFinishBatchPlanLooksUpLeases(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	rows, err := s.DB().Query("EXPLAIN QUERY PLAN "+sqlOf(qFinishBatch),
		sql.Named("leases", `[{"id":"a","token":"b"}]`))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "SCAN q") || strings.Contains(text, "SCAN job_queue") {
		t.Fatalf("finish_batch scans job_queue:\n%s", text)
	}
	if !strings.Contains(text, "sqlite_autoindex_job_queue_1") {
		t.Fatalf("finish_batch does not look leases up by job_queue's primary key:\n%s", text)
	}
}
