package sqlite

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/windforce/windforce/spine"
)

// resolveNow is a method's Now: the given time, or the process clock when
// zero, at the microsecond precision it is stored with.
func resolveNow(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Microsecond)
}

// micros is the stored form of a time.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros reads a stored time back, in UTC.
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// nullTime reads a nullable stored time.
func nullTime(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

// timeOrZero reads a nullable stored time as a time.Time, zero for NULL.
func timeOrZero(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromMicros(n.Int64)
}

// jsonArg binds JSON as TEXT (a []byte would be a BLOB, which the STRICT
// tables refuse); empty means NULL.
func jsonArg(v json.RawMessage) any {
	if len(v) == 0 {
		return nil
	}
	return string(v)
}

// nullJSON reads nullable JSON text.
func nullJSON(n sql.NullString) json.RawMessage {
	if !n.Valid {
		return nil
	}
	return json.RawMessage(n.String)
}

// textArg binds an optional text column: empty means NULL.
func textArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// durationMS is a duration as stored (milliseconds).
func durationMS(d time.Duration) int64 { return d.Milliseconds() }

// idsJSON encodes job ids as a JSON array for json_each.
func idsJSON(ids []uuid.UUID) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(id.String())
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String()
}

// leasesJSON encodes leases as a JSON array of [job_id, claim_token] pairs
// for json_each.
func leasesJSON(ls []spine.Lease) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`["`)
		b.WriteString(l.JobID.String())
		b.WriteString(`","`)
		b.WriteString(l.ClaimToken.String())
		b.WriteString(`"]`)
	}
	b.WriteByte(']')
	return b.String()
}

// stringsJSON encodes strings as a JSON array for json_each.
func stringsJSON(ss []string) (string, error) {
	b, err := json.Marshal(ss)
	if err != nil {
		return "", fmt.Errorf("encode %v: %w", ss, err)
	}
	return string(b), nil
}

// translate maps driver errors to spine's typed errors at the seam: a
// duplicate key is a conflict (a job id enqueued twice), a refused CHECK or
// NOT NULL is an invalid request. The driver error stays wrapped for the
// details.
func translate(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return fmt.Errorf("%w: %w", spine.ErrConflict, err)
	case sqlite3.SQLITE_CONSTRAINT_CHECK, sqlite3.SQLITE_CONSTRAINT_NOTNULL, sqlite3.SQLITE_CONSTRAINT_DATATYPE:
		return fmt.Errorf("%w: %w", spine.ErrInvalid, err)
	}
	return err
}

// decodeNullError reads a stored job error column; nil for NULL.
func decodeNullError(n sql.NullString) (*spine.JobError, error) {
	if !n.Valid {
		return nil, nil
	}
	return spine.DecodeJobError([]byte(n.String))
}

// limitArgs passes limits to their three nullable columns (limit_memory,
// limit_pids, limit_cpu): NULL for a field that is not set.
func limitArgs(l spine.Limits) []any {
	memory, pids, cpu := l.Columns()
	return []any{sql.Named("limit_memory", memory), sql.Named("limit_pids", pids), sql.Named("limit_cpu", cpu)}
}

// pinArgs passes the pin's env and warm to their nullable JSON text
// columns (spine.EnvColumn, spine.WarmColumn): NULL for none.
func pinArgs(pin spine.Pin) []any {
	return []any{sql.Named("env", textPtrArg(spine.EnvColumn(pin.Env))), sql.Named("warm", textPtrArg(spine.WarmColumn(pin.Warm)))}
}

// textPtrArg is a nullable text column's argument: nil (NULL) or the
// string itself.
func textPtrArg(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// pinCols receives a job's (or app's) nullable env and warm columns.
type pinCols struct {
	env, warm sql.Null[string]
}

// apply sets the pin's env and warm from what was scanned.
func (c pinCols) apply(p *spine.Pin) error {
	var err error
	if p.Env, err = spine.ParseEnvColumn(ptr(c.env)); err != nil {
		return err
	}
	p.Warm, err = spine.ParseWarmColumn(ptr(c.warm))
	return err
}

// limitCols receives the three nullable limit columns; NULL reads back as
// the zero "not set".
type limitCols struct {
	memory, pids sql.NullInt64
	cpu          sql.NullFloat64
}

// limits is what was scanned.
func (c limitCols) limits() spine.Limits {
	return spine.Limits{Memory: c.memory.Int64, Pids: int(c.pids.Int64), CPU: c.cpu.Float64}
}
