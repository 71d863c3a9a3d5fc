package postgres

import (
	"context"
	"embed"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/windforce/windforce/store/migrate"
)

// migrationFiles are the numbered schema migrations, applied in order.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations loads the embedded set, refusing gaps and duplicates.
func migrations() ([]migrate.Migration, error) {
	return migrate.Load(migrationFiles, "migrations")
}

// Migrate applies the migrations not yet recorded in schema_migration, all
// in one transaction under a transaction-scoped advisory lock: servers that
// start together queue on the lock, and each finds the work done by the
// first. A database ahead of this binary is refused. Only ctx bounds it
// (not the query timeout): a migration may legitimately take long.
func (s *Driver) Migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qMigrateLock); err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		if _, err := tx.Exec(ctx, qMigrateInit); err != nil {
			return fmt.Errorf("create schema_migration: %w", err)
		}
		var applied int
		if err := tx.QueryRow(ctx, qAppliedVersion).Scan(&applied); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		pending, err := migrate.Pending(ms, applied)
		if err != nil {
			return err
		}
		for _, m := range pending {
			if err := apply(ctx, tx, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// apply runs one migration and records it. Exec without arguments uses the
// simple protocol, so a file may hold many statements.
func apply(ctx context.Context, tx pgx.Tx, m migrate.Migration) error {
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return fmt.Errorf("apply migration %04d_%s: %w", m.Version, m.Name, err)
	}
	if _, err := tx.Exec(ctx, qMigrateRecord, namedArgs{"version": m.Version, "name": m.Name}); err != nil {
		return fmt.Errorf("record migration %04d_%s: %w", m.Version, m.Name, err)
	}
	return nil
}

// SchemaVersion reports the applied schema version and the latest this
// binary knows, for readiness checks: the store is ready when they match.
func (s *Driver) SchemaVersion(ctx context.Context) (current, latest int, err error) {
	ms, err := migrations()
	if err != nil {
		return 0, 0, fmt.Errorf("schema version: %w", err)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	var exists bool
	if err := s.pool.QueryRow(ctx, qMigrationTableExists).Scan(&exists); err != nil {
		return 0, 0, fmt.Errorf("schema version: %w", err)
	}
	if exists {
		if err := s.pool.QueryRow(ctx, qAppliedVersion).Scan(&current); err != nil {
			return 0, 0, fmt.Errorf("schema version: %w", err)
		}
	}
	return current, len(ms), nil
}
