package postgres

import "testing"

// TestEventHorizon walks the horizon through the race it exists for: a
// seq handed out to a transaction still open stays beyond the horizon
// until every transaction that could hold it has ended.
func TestEventHorizon(t *testing.T) {
	var h eventHorizon
	// Seqs up to 10 handed out; xids 100..104 assigned, 100 still open.
	if got := h.final(horizonSample{lastSeq: 10, xmax: 105}, 100); got != 0 {
		t.Fatalf("final = %d with a transaction open, want 0", got)
	}
	// More seqs; 100 still open: nothing is final yet.
	if got := h.final(horizonSample{lastSeq: 12, xmax: 107}, 100); got != 0 {
		t.Fatalf("final = %d, want 0", got)
	}
	// 100..104 ended, 105 (which may hold seq 11) still open: only the
	// first sample is final.
	if got := h.final(horizonSample{lastSeq: 15, xmax: 110}, 105); got != 10 {
		t.Fatalf("final = %d, want 10", got)
	}
	// Everything up to 109 ended.
	if got := h.final(horizonSample{lastSeq: 15, xmax: 111}, 110); got != 15 {
		t.Fatalf("final = %d, want 15", got)
	}
	// Nothing running: all handed out is final at once.
	if got := h.final(horizonSample{lastSeq: 20, xmax: 120}, 120); got != 20 {
		t.Fatalf("final = %d, want 20", got)
	}
	if len(h.samples) != 0 {
		t.Fatalf("samples left: %v", h.samples)
	}
}

// TestEventHorizonBounded: a transaction held open for long keeps the
// samples bounded, and the oldest ones (the first to become final).
func TestEventHorizonBounded(t *testing.T) {
	var h eventHorizon
	for i := range int64(1000) {
		h.final(horizonSample{lastSeq: i + 1, xmax: 100 + i + 1}, 100)
	}
	if len(h.samples) > maxHorizonSamples {
		t.Fatalf("%d samples kept, want at most %d", len(h.samples), maxHorizonSamples)
	}
	if got := h.final(horizonSample{lastSeq: 1000, xmax: 1101}, 102); got != 2 {
		t.Fatalf("final = %d, want 2 (the oldest samples kept)", got)
	}
}
