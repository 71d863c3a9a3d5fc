// Package migrate loads a store's embedded, numbered SQL migrations and
// refuses a set with gaps or duplicates, so a missing file is found when the
// binary starts, not when a table is missing in production.
package migrate

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered SQL file, applied in one transaction.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Load reads every NNNN_name.sql file in dir of fsys, in version order. The
// versions must run 1, 2, 3… without gaps or duplicates.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		m, err := parse(fsys, dir, e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	if err := checkSequence(ms); err != nil {
		return nil, err
	}
	return ms, nil
}

func parse(fsys fs.FS, dir, file string) (Migration, error) {
	num, name, ok := strings.Cut(strings.TrimSuffix(file, ".sql"), "_")
	if !ok {
		return Migration{}, fmt.Errorf("migration %q: name must be NNNN_name.sql", file)
	}
	v, err := strconv.Atoi(num)
	if err != nil || v < 1 {
		return Migration{}, fmt.Errorf("migration %q: version %q is not a positive number", file, num)
	}
	body, err := fs.ReadFile(fsys, path.Join(dir, file))
	if err != nil {
		return Migration{}, fmt.Errorf("read migration %q: %w", file, err)
	}
	return Migration{Version: v, Name: name, SQL: string(body)}, nil
}

// checkSequence refuses gaps and duplicates in sorted migrations.
func checkSequence(ms []Migration) error {
	for i, m := range ms {
		if want := i + 1; m.Version != want {
			if i > 0 && m.Version == ms[i-1].Version {
				return fmt.Errorf("migration version %d appears twice (%s, %s)", m.Version, ms[i-1].Name, m.Name)
			}
			return fmt.Errorf("migration %d (%s) found where %d was expected: the set has a gap", m.Version, m.Name, want)
		}
	}
	return nil
}

// Pending returns the migrations after the applied version, and refuses a
// database that is ahead of this binary.
func Pending(ms []Migration, applied int) ([]Migration, error) {
	if applied > len(ms) {
		return nil, fmt.Errorf("database schema is at version %d but this binary knows only %d: upgrade windforce", applied, len(ms))
	}
	return ms[applied:], nil
}

// Before returns the migrations that come before the one named name, for
// tests that build a database as an older binary left it.
func Before(ms []Migration, name string) ([]Migration, error) {
	for i, m := range ms {
		if m.Name == name {
			return ms[:i], nil
		}
	}
	return nil, fmt.Errorf("no migration named %s", name)
}
