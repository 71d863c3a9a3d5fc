package postgres

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestUUIDCodec checks that uuid.UUID round-trips through the codec the
// store registers, alone, in arrays, as NULL and behind pointers, and that
// its text form matches Postgres's.
func TestUUIDCodec(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()

	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	m := conn.Conn().TypeMap()
	if _, ok := m.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, a).(encodeUUID); !ok {
		t.Errorf("uuid.UUID is not encoded by the store's codec (pgx would format and parse it)")
	}
	if _, ok := m.PlanScan(pgtype.UUIDOID, pgtype.BinaryFormatCode, &a).(scanUUID); !ok {
		t.Errorf("*uuid.UUID is not scanned by the store's codec (pgx would go through a string)")
	}
	conn.Release()

	var text string
	var back uuid.UUID
	if err := s.pool.QueryRow(ctx, `SELECT $1::uuid::text, $1::uuid`, a).Scan(&text, &back); err != nil {
		t.Fatalf("scalar: %v", err)
	}
	if text != a.String() || back != a {
		t.Fatalf("scalar: sent %s, Postgres read %s, scanned %s", a, text, back)
	}

	var arr []uuid.UUID
	var n int
	if err := s.pool.QueryRow(ctx, `SELECT $1::uuid[], cardinality($1::uuid[])`, []uuid.UUID{a, b}).Scan(&arr, &n); err != nil {
		t.Fatalf("array: %v", err)
	}
	if n != 2 || len(arr) != 2 || arr[0] != a || arr[1] != b {
		t.Fatalf("array: sent [%s %s], got %v (cardinality %d)", a, b, arr, n)
	}

	nullable := uuid.New()
	var ptr *uuid.UUID = &nullable
	if err := s.pool.QueryRow(ctx, `SELECT NULL::uuid, NULL::uuid`).Scan(&back, &ptr); err != nil {
		t.Fatalf("null: %v", err)
	}
	if back != uuid.Nil || ptr != nil {
		t.Fatalf("null: scanned %s and %v, want uuid.Nil and nil", back, ptr)
	}

	var isNull bool
	if err := s.pool.QueryRow(ctx, `SELECT $1::uuid IS NULL`, (*uuid.UUID)(nil)).Scan(&isNull); err != nil || !isNull {
		t.Fatalf("nil pointer: IS NULL = %v, err %v", isNull, err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT $1::uuid`, &a).Scan(&back); err != nil || back != a {
		t.Fatalf("pointer: got %s, err %v", back, err)
	}
}
