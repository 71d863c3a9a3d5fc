package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/windforce/windforce/spine"
)

// JobSetSecrets records the secrets an owned job received as a JSON array,
// fenced on its claim token (queries/job_set_secrets.sql), one autocommit
// statement on the writer (driver.JobSecretsExecutor).
func (e *executor) JobSetSecrets(ctx context.Context, lease spine.Lease, secrets []string) error {
	if secrets == nil {
		secrets = []string{}
	}
	text, err := json.Marshal(secrets)
	if err != nil {
		return fmt.Errorf("encode job secrets: %w", err)
	}
	res, err := e.writerExec(ctx, qJobSetSecrets,
		sql.Named("id", lease.JobID), sql.Named("token", lease.ClaimToken), sql.Named("secrets", string(text)))
	if err != nil {
		return translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return spine.ErrNotOwner
	}
	return nil
}

// decodeJobSecrets reads the job row's secrets column (NULL: none).
func decodeJobSecrets(v sql.NullString) ([]string, error) {
	if !v.Valid || v.String == "" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v.String), &out); err != nil {
		return nil, fmt.Errorf("decode job secrets: %w", err)
	}
	return out, nil
}
