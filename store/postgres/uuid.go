package postgres

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// uuidCodec lets pgx read and write uuid.UUID as the 16 bytes they are.
//
// Left to itself pgx treats uuid.UUID as a driver.Valuer: every id, and
// every element of the id arrays that claim, heartbeat and batch completion
// send, is formatted as a string, parsed back, and planned through an error
// built with fmt.Errorf on the way. That cost about a third of the worker
// process's CPU in the no-op benchmark (docs/BENCHMARKS.md). Scans went the
// other way through sql.Scanner and a string.
type uuidCodec struct{ pgtype.UUIDCodec }

// registerUUID makes conn's type map use uuidCodec for uuid and, since the
// array codec looks its element up by OID, for uuid[] too.
func registerUUID(m *pgtype.Map) {
	m.RegisterType(&pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}})
}

// PlanEncode sends uuid.UUID as pgtype.UUID; other values go to pgx's codec.
func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(uuid.UUID); ok {
		if next := c.UUIDCodec.PlanEncode(m, oid, format, pgtype.UUID{}); next != nil {
			return encodeUUID{next}
		}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

// PlanScan reads into *uuid.UUID through pgtype.UUID; other targets go to
// pgx's codec.
func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok {
		if next := c.UUIDCodec.PlanScan(m, oid, format, &pgtype.UUID{}); next != nil {
			return scanUUID{next}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type encodeUUID struct{ next pgtype.EncodePlan }

func (p encodeUUID) Encode(value any, buf []byte) ([]byte, error) {
	return p.next.Encode(pgtype.UUID{Bytes: value.(uuid.UUID), Valid: true}, buf)
}

type scanUUID struct{ next pgtype.ScanPlan }

// Scan reads NULL as uuid.Nil, as uuid.UUID's own sql.Scanner does.
func (p scanUUID) Scan(src []byte, dst any) error {
	var u pgtype.UUID
	if err := p.next.Scan(src, &u); err != nil {
		return err
	}
	*dst.(*uuid.UUID) = u.Bytes
	return nil
}
