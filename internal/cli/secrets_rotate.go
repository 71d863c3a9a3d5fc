package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/store"
)

// secretsRotateKey is `secrets rotate-key`: like migrate, it works on the
// database itself. Every row sealed with the old key is re-encrypted with
// the current key (WINDFORCE_SECRETS_KEY, else derived from
// WINDFORCE_SECRET), --batch rows per transaction; it is idempotent and
// resumable (rows sealed with the current key are skipped).
func secretsRotateKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f config
	fs := newFlagSet("secrets rotate-key", stderr)
	fs.bind(cmdSecretsRotate, &f)
	oldKey := fs.String("old-key", "", "the old WINDFORCE_SECRETS_KEY (32 bytes, base64 or hex)")
	oldKeyFile := fs.String("old-key-file", "", "a file holding the old WINDFORCE_SECRETS_KEY")
	oldSecretFile := fs.String("old-secret-file", "", "a file holding the old WINDFORCE_SECRET, when the old key was derived from it")
	batch := fs.Int("batch", store.DefaultRotateBatch, "rows re-encrypted per transaction")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "usage: windforce secrets rotate-key --old-key K|--old-key-file F|--old-secret-file F [--database-url URL]"}
	}
	old, err := oldSecretsKey(*oldKey, *oldKeyFile, *oldSecretFile)
	if err != nil {
		return err
	}
	current, err := secrets.KeyFromConfig(f.secretsKey, []byte(f.secret))
	if err != nil {
		return &UsageError{Msg: fmt.Sprintf("the current key: %v", err)}
	}
	if *batch < 1 {
		return &UsageError{Msg: "--batch must be at least 1"}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	s, err := store.Open(ctx, f.dbURL, log)
	if err != nil {
		return err
	}
	defer s.Close()
	if cur, latest, err := s.SchemaVersion(ctx); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	} else if cur != latest {
		return fmt.Errorf("database schema at version %d of %d: run windforce migrate first", cur, latest)
	}
	rot, err := s.RotateSecretsKey(ctx, old, current, *batch)
	if err != nil {
		return fmt.Errorf("%w (the rows re-encrypted so far stay so; run it again to go on)", err)
	}
	fmt.Fprintf(stdout, "re-encrypted %d secrets from key %s to key %s\n", rot.Resealed, old.ID(), current.ID())
	for _, row := range rot.Foreign {
		fmt.Fprintf(stderr, "warning: %s is sealed with neither key; left as it is\n", row)
	}
	return nil
}

// oldSecretsKey is the old key from exactly one of its three sources.
func oldSecretsKey(key, keyFile, secretFile string) (secrets.Key, error) {
	given := 0
	for _, v := range []string{key, keyFile, secretFile} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return secrets.Key{}, &UsageError{Msg: "give the old key once: --old-key K, --old-key-file F or --old-secret-file F"}
	}
	switch {
	case keyFile != "":
		data, err := os.ReadFile(keyFile)
		if err != nil {
			return secrets.Key{}, fmt.Errorf("read the old key: %w", err)
		}
		key = string(data)
	case secretFile != "":
		data, err := os.ReadFile(secretFile)
		if err != nil {
			return secrets.Key{}, fmt.Errorf("read the old secret: %w", err)
		}
		return secrets.DeriveKey([]byte(strings.TrimSpace(string(data))))
	}
	k, err := secrets.ParseKey(key)
	if err != nil {
		return secrets.Key{}, &UsageError{Msg: "the old key: " + err.Error()}
	}
	return k, nil
}
