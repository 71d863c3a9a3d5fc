package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionAndUsage(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	if err := Run(context.Background(), []string{"--version"}, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "windforce ") {
		t.Fatalf("--version = %q, %v", out.String(), err)
	}
	err := Run(context.Background(), []string{"frobnicate"}, &out, &errOut)
	if err == nil || ExitCode(err) != 2 || !strings.Contains(errOut.String(), "Usage:") {
		t.Fatalf("unknown command: err %v (exit %d), stderr %q", err, ExitCode(err), errOut.String())
	}
}

func TestMigrateSQLiteTwice(t *testing.T) {
	t.Parallel()
	url := "sqlite://" + filepath.Join(t.TempDir(), "wf.db")
	for range 2 {
		var out, errOut bytes.Buffer
		if err := Run(context.Background(), []string{"migrate", "--database-url", url}, &out, &errOut); err != nil {
			t.Fatalf("migrate: %v\n%s", err, errOut.String())
		}
		var current, latest int
		if _, err := fmt.Sscanf(out.String(), "database schema at version %d of %d", &current, &latest); err != nil || current != latest || current < 1 {
			t.Fatalf("migrate printed %q", out.String())
		}
	}
}

func TestMigrateRefusesUnknownDatabase(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), []string{"migrate", "--database-url", "mysql://u:hunter2@h/db"}, &out, &errOut)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("migrate of mysql URL: %v (the password must not be echoed)", err)
	}
}
