package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/windforce/windforce/spine"
)

// translate maps driver errors to spine's typed errors at the seam, keeping
// the driver error in the chain for logs: a duplicate id is a conflict; a
// value the schema refuses (a CHECK, a NOT NULL, bad JSON, a NUL byte) is
// an invalid request.
func translate(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch pgErr.Code {
	case "23505": // unique_violation
		return fmt.Errorf("%w: %w", spine.ErrConflict, err)
	case "23514", // check_violation
		"23502", // not_null_violation
		"22P02", // invalid_text_representation (bad JSON for jsonb)
		"22021", // character_not_in_repertoire (NUL, bad UTF-8)
		"22P05", // untranslatable_character (\u0000 in jsonb)
		"22003", // numeric_value_out_of_range
		"22008": // datetime_field_overflow
		return fmt.Errorf("%w: %w", spine.ErrInvalid, err)
	}
	return err
}
