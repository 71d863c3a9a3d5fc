package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"time"

	"github.com/windforce/windforce/store/migrate"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrations loads the embedded migrations, refusing a set with gaps.
func migrations() ([]migrate.Migration, error) {
	return migrate.Load(migrationFS, "migrations")
}

// Migrate applies the embedded migrations not yet applied, all in one
// BEGIN IMMEDIATE transaction: a concurrent Migrate (another process on
// the same file) waits and then finds nothing to do. It refuses a database
// that is ahead of this binary. Once the schema is current the store
// prepares its statements.
func (s *Driver) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var applied []migrate.Migration
	err = s.writeSolo(ctx, func(w *writeTx) error {
		if _, err := w.tx.ExecContext(ctx, sqlOf(qMigrateTable)); err != nil {
			return fmt.Errorf("create schema_migration: %w", err)
		}
		var current int
		if err := w.tx.QueryRowContext(ctx, sqlOf(qSchemaVersion)).Scan(&current); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		pending, err := migrate.Pending(ms, current)
		if err != nil {
			return err
		}
		for _, m := range pending {
			if err := apply(ctx, w.tx, m); err != nil {
				return err
			}
		}
		applied = pending
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	for _, m := range applied {
		s.log.Info("applied migration", "store", "sqlite", "version", m.Version, "name", m.Name)
	}
	if err := s.prepareIfCurrent(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

func apply(ctx context.Context, tx *sql.Tx, m migrate.Migration) error {
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("apply migration %d (%s): %w", m.Version, m.Name, err)
	}
	if _, err := tx.ExecContext(ctx, sqlOf(qMigrateRecord),
		sql.Named("version", m.Version),
		sql.Named("name", m.Name),
		sql.Named("applied_at", micros(time.Now()))); err != nil {
		return fmt.Errorf("record migration %d (%s): %w", m.Version, m.Name, err)
	}
	return nil
}

// SchemaVersion reports the applied schema version (0 for a database never
// migrated) and the latest version this binary carries.
func (s *Driver) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	ms, err := migrations()
	if err != nil {
		return 0, 0, fmt.Errorf("schema version: %w", err)
	}
	latest = len(ms)
	var exists bool
	if err := s.reader.QueryRowContext(ctx, sqlOf(qMigrateExists)).Scan(&exists); err != nil {
		return 0, latest, fmt.Errorf("schema version: %w", err)
	}
	if !exists {
		return 0, latest, nil
	}
	if err := s.reader.QueryRowContext(ctx, sqlOf(qSchemaVersion)).Scan(&current); err != nil {
		return 0, latest, fmt.Errorf("schema version: %w", err)
	}
	return current, latest, nil
}
