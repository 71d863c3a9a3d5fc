package store

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/postgres"
	"github.com/windforce/windforce/store/sqlite"
)

// secretKey is a fixed test key made of fill.
func secretKey(t *testing.T, fill byte) secrets.Key {
	t.Helper()
	k, err := secrets.ParseKey(strings.Repeat(fmt.Sprintf("%02x", fill), secrets.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// putSecret sets ws/name to value with key, as alice.
func putSecret(t *testing.T, s *Store, key secrets.Key, ws, name, value string) secrets.Secret {
	t.Helper()
	sec, _, err := s.PutSecret(t.Context(), key, secrets.Put{Workspace: ws, Name: name, Value: []byte(value),
		Description: "for " + name, Actor: "token:alice"})
	if err != nil {
		t.Fatalf("PutSecret %s/%s: %v", ws, name, err)
	}
	return sec
}

// sealedOf reads the current row of ws/name, failing when there is none.
func sealedOf(t *testing.T, s *Store, ws, name string) secrets.Sealed {
	t.Helper()
	rows, err := s.SecretsSealed(t.Context(), ws, []string{name})
	if err != nil || len(rows) != 1 {
		t.Fatalf("SecretsSealed %s/%s = %+v, %v", ws, name, rows, err)
	}
	return rows[0]
}

// openOf opens the current row of ws/name with key.
func openOf(t *testing.T, s *Store, key secrets.Key, ws, name string) (string, error) {
	t.Helper()
	r := sealedOf(t, s, ws, name)
	v, err := secrets.Open(key, ws, name, r.Version, r.Ciphertext)
	return string(v), err
}

// setCiphertext overwrites the stored ciphertext of ws/name with c, as
// someone with write access to the database alone could.
func setCiphertext(t *testing.T, s *Store, ws, name string, c []byte) {
	t.Helper()
	var err error
	switch d := s.Driver().(type) {
	case *postgres.Driver:
		_, err = d.Pool().Exec(t.Context(), `UPDATE secret SET ciphertext = $1 WHERE workspace = $2 AND name = $3`, c, ws, name)
	case *sqlite.Driver:
		_, err = d.DB().ExecContext(t.Context(), `UPDATE secret SET ciphertext = ? WHERE workspace = ? AND name = ?`, c, ws, name)
	default:
		t.Fatalf("unknown driver %T", d)
	}
	if err != nil {
		t.Fatalf("set ciphertext of %s/%s: %v", ws, name, err)
	}
}

// auditOf is the audit of ws, newest first, as "action name@version by actor".
func auditOf(t *testing.T, s *Store, ws string) []string {
	t.Helper()
	entries, _, err := s.SecretAudit(t.Context(), ws, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, fmt.Sprintf("%s %s@%d by %s", e.Action, e.Name, e.Version, e.Actor))
	}
	return out
}

// TestSecretLifecycle: create, replace, delete and create again, each
// audited with who and when; versions count on across the delete; the
// listing never carries a value; deleting what is not there is not found
// and audits nothing; on both databases.
func TestSecretLifecycle(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		key := secretKey(t, 1)
		at := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
		sec, created, err := s.PutSecret(ctx, key, secrets.Put{Workspace: "ws", Name: "SLACK", Value: []byte("v1"),
			Description: "the bot", Actor: "token:alice", Now: at})
		want := secrets.Secret{Workspace: "ws", Name: "SLACK", Description: "the bot", Version: 1, UpdatedAt: at, UpdatedBy: "token:alice"}
		if err != nil || !created || sec != want {
			t.Fatalf("create = %+v, %v, %v; want %+v, created", sec, created, err, want)
		}
		sec, created, err = s.PutSecret(ctx, key, secrets.Put{Workspace: "ws", Name: "SLACK", Value: []byte("v2"), Actor: "token:bob"})
		if err != nil || created || sec.Version != 2 || sec.UpdatedBy != "token:bob" || sec.Description != "" ||
			time.Since(sec.UpdatedAt) > time.Minute {
			t.Fatalf("replace = %+v, %v, %v; want version 2 by bob now, not created", sec, created, err)
		}
		putSecret(t, s, key, "other", "SLACK", "elsewhere")
		list, err := s.ListSecrets(ctx, "ws")
		if err != nil || len(list) != 1 || list[0] != sec {
			t.Fatalf("ListSecrets = %+v, %v; want [%+v]", list, err, sec)
		}
		if v, err := openOf(t, s, key, "ws", "SLACK"); err != nil || v != "v2" {
			t.Fatalf("current value opens to %q, %v; want v2", v, err)
		}
		if err := s.DeleteSecret(ctx, "ws", "SLACK", "token:carol"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSecret(ctx, "ws", "SLACK", "token:carol"); !errors.Is(err, secrets.ErrNotFound) || !errors.Is(err, spine.ErrNotFound) {
			t.Fatalf("second delete = %v, want secrets.ErrNotFound", err)
		}
		if rows, err := s.SecretsSealed(ctx, "ws", []string{"SLACK"}); err != nil || len(rows) != 0 {
			t.Fatalf("SecretsSealed after delete = %+v, %v", rows, err)
		}
		if sec := putSecret(t, s, key, "ws", "SLACK", "v3"); sec.Version != 3 {
			t.Fatalf("create after delete: version %d, want 3 (a version is never reused)", sec.Version)
		}
		wantAudit := []string{"create SLACK@3 by token:alice", "delete SLACK@2 by token:carol",
			"replace SLACK@2 by token:bob", "create SLACK@1 by token:alice"}
		if got := auditOf(t, s, "ws"); !slices.Equal(got, wantAudit) {
			t.Fatalf("audit = %q, want %q", got, wantAudit)
		}
		entries, _, _ := s.SecretAudit(ctx, "ws", 0, 0)
		if !entries[3].At.Equal(at) {
			t.Fatalf("create audited at %v, want %v", entries[3].At, at)
		}
		first, next, err := s.SecretAudit(ctx, "ws", 0, 3)
		if err != nil || len(first) != 3 || next != first[2].ID {
			t.Fatalf("first audit page = %d entries, next %d, %v", len(first), next, err)
		}
		rest, next, err := s.SecretAudit(ctx, "ws", next, 3)
		if err != nil || len(rest) != 1 || next != 0 || rest[0].Action != secrets.ActionCreate || rest[0].Version != 1 {
			t.Fatalf("second audit page = %+v, next %d, %v", rest, next, err)
		}
	})
}

// TestSecretRefusalsStoreNothing: a bad name, an empty, oversized or
// non-text value, a bad description or no key is refused with its typed
// error and writes no row, no audit entry and takes no version.
func TestSecretRefusalsStoreNothing(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		key := secretKey(t, 1)
		for _, c := range []struct {
			name, value, description string
			key                      secrets.Key
			want                     error
		}{
			{"1BAD", "v", "", key, secrets.ErrInvalidName},
			{"A-B", "v", "", key, secrets.ErrInvalidName},
			{"A", "", "", key, secrets.ErrEmptyValue},
			{"A", strings.Repeat("x", secrets.MaxValueBytes+1), "", key, secrets.ErrValueTooLarge},
			{"A", "nul\x00", "", key, secrets.ErrValueNotText},
			{"A", "\xff\xfe", "", key, secrets.ErrValueNotText},
			{"A", "v", "bell\a", key, secrets.ErrInvalidDescription},
			{"A", "v", "", secrets.Key{}, secrets.ErrNoKey},
		} {
			_, _, err := s.PutSecret(ctx, c.key, secrets.Put{Workspace: "ws", Name: c.name, Value: []byte(c.value),
				Description: c.description, Actor: "token:alice"})
			if !errors.Is(err, c.want) {
				t.Errorf("PutSecret(%q, %.10q, %q) = %v, want %v", c.name, c.value, c.description, err, c.want)
			}
		}
		if list, err := s.ListSecrets(ctx, "ws"); err != nil || len(list) != 0 {
			t.Fatalf("refused puts stored %+v, %v", list, err)
		}
		if got := auditOf(t, s, "ws"); len(got) != 0 {
			t.Fatalf("refused puts audited %q", got)
		}
		if sec := putSecret(t, s, key, "ws", "A", "ok"); sec.Version != 1 {
			t.Fatalf("first accepted put: version %d, want 1 (refusals take no version)", sec.Version)
		}
	})
}

// TestSecretCiphertextBoundToItsRow: what the database holds differs per
// version and never contains the value; a ciphertext moved onto another
// name, another workspace or back onto a later version (a restored
// backup) does not open; on both databases.
func TestSecretCiphertextBoundToItsRow(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		key := secretKey(t, 1)
		const value = "hunter2-the-same-value"
		putSecret(t, s, key, "ws", "A", value)
		v1 := sealedOf(t, s, "ws", "A")
		putSecret(t, s, key, "ws", "A", value)
		v2 := sealedOf(t, s, "ws", "A")
		putSecret(t, s, key, "ws", "B", value)
		putSecret(t, s, key, "ws2", "A", value)
		b, other := sealedOf(t, s, "ws", "B"), sealedOf(t, s, "ws2", "A")
		for _, c := range [][]byte{v1.Ciphertext, v2.Ciphertext, b.Ciphertext, other.Ciphertext} {
			if bytes.Contains(c, []byte(value)) || strings.Contains(hex.EncodeToString(c), hex.EncodeToString([]byte(value))) {
				t.Fatalf("a stored ciphertext contains the value")
			}
		}
		if bytes.Equal(v1.Ciphertext, v2.Ciphertext) || v1.Version == v2.Version || v1.KeyID != key.ID() {
			t.Fatalf("versions %d and %d store the same ciphertext, or key %q is not %q", v1.Version, v2.Version, v1.KeyID, key.ID())
		}
		_, rows := sqlRows(t, s, `SELECT ciphertext FROM secret`)
		for _, r := range rows {
			if c, _ := r["ciphertext"].([]byte); len(c) == 0 || bytes.Contains(c, []byte(value)) {
				t.Fatalf("stored ciphertext %x: empty or contains the value", c)
			}
		}

		// Swap A and B of ws, then move ws2's A onto ws's A, then put
		// version 1 back under version 2.
		setCiphertext(t, s, "ws", "A", b.Ciphertext)
		setCiphertext(t, s, "ws", "B", v2.Ciphertext)
		for _, name := range []string{"A", "B"} {
			if v, err := openOf(t, s, key, "ws", name); !errors.Is(err, secrets.ErrOpen) {
				t.Fatalf("swapped %s opens to %q, %v; want secrets.ErrOpen", name, v, err)
			}
		}
		setCiphertext(t, s, "ws", "A", other.Ciphertext)
		if v, err := openOf(t, s, key, "ws", "A"); !errors.Is(err, secrets.ErrOpen) {
			t.Fatalf("another workspace's ciphertext opens to %q, %v", v, err)
		}
		setCiphertext(t, s, "ws", "A", v1.Ciphertext)
		if v, err := openOf(t, s, key, "ws", "A"); !errors.Is(err, secrets.ErrOpen) {
			t.Fatalf("version 1's ciphertext under version 2 opens to %q, %v", v, err)
		}
		setCiphertext(t, s, "ws", "A", v2.Ciphertext)
		if v, err := openOf(t, s, key, "ws", "A"); err != nil || v != value {
			t.Fatalf("its own ciphertext back: %q, %v", v, err)
		}
	})
}

// TestSecretConcurrentPuts: puts of one name at once each take their own
// version; the last one is current and opens; on both databases.
func TestSecretConcurrentPuts(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		key := secretKey(t, 1)
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				_, _, err := s.PutSecret(t.Context(), key, secrets.Put{Workspace: "ws", Name: "A",
					Value: fmt.Appendf(nil, "value %d", i), Actor: "token:alice"})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		entries, _, err := s.SecretAudit(t.Context(), "ws", 0, 0)
		if err != nil || len(entries) != n {
			t.Fatalf("audit %d entries, %v; want %d", len(entries), err, n)
		}
		versions := map[int64]bool{}
		creates := 0
		for _, e := range entries {
			versions[e.Version] = true
			if e.Action == secrets.ActionCreate {
				creates++
			}
		}
		if len(versions) != n || creates != 1 {
			t.Fatalf("audited versions %v, %d creates; want %d distinct versions, one create", versions, creates, n)
		}
		cur := sealedOf(t, s, "ws", "A")
		if cur.Version != n {
			t.Fatalf("current version %d, want %d", cur.Version, n)
		}
		if _, err := secrets.Open(key, "ws", "A", cur.Version, cur.Ciphertext); err != nil {
			t.Fatal(err)
		}
	})
}

// TestRotateSecretsKey: every row the old key sealed is sealed with the
// new one, in bounded batches, and opens with the new key only; a second
// run does nothing; a row of a third key is left and reported; a run
// stopped by a bad row keeps the batches it committed and a later run
// finishes; on both databases.
func TestRotateSecretsKey(t *testing.T) {
	t.Parallel()
	forEachDriver(t, func(t *testing.T, s *Store) {
		ctx := t.Context()
		old, current, third := secretKey(t, 1), secretKey(t, 2), secretKey(t, 3)
		values := map[string]string{}
		for i := range 7 {
			ws, name := fmt.Sprintf("ws%d", i%2), fmt.Sprintf("S%d", i)
			putSecret(t, s, old, ws, name, "value of "+name)
			values[ws+"/"+name] = "value of " + name
		}
		putSecret(t, s, third, "ws9", "FOREIGN", "third")
		// ws1/S1 claims the old key but holds another row's ciphertext.
		good := sealedOf(t, s, "ws1", "S1").Ciphertext
		setCiphertext(t, s, "ws1", "S1", sealedOf(t, s, "ws1", "S3").Ciphertext)

		_, err := s.RotateSecretsKey(ctx, old, current, 2)
		if !errors.Is(err, secrets.ErrOpen) {
			t.Fatalf("rotation over a bad row = %v, want secrets.ErrOpen", err)
		}
		// Batches are (ws0/S0, ws0/S2), (ws0/S4, ws0/S6), (ws1/S1 …): the
		// first two committed, the third rolled back.
		for _, name := range []string{"S0", "S2", "S4", "S6"} {
			if k := sealedOf(t, s, "ws0", name).KeyID; k != current.ID() {
				t.Fatalf("ws0/%s after the stopped run: key %s, want the new key's", name, k)
			}
		}
		if k := sealedOf(t, s, "ws1", "S3").KeyID; k != old.ID() {
			t.Fatalf("ws1/S3, in the rolled-back batch: key %s, want the old key's", k)
		}

		setCiphertext(t, s, "ws1", "S1", good)
		rot, err := s.RotateSecretsKey(ctx, old, current, 2)
		if err != nil || rot.Resealed != 3 || !slices.Equal(rot.Foreign, []string{"ws9/FOREIGN (key " + third.ID() + ")"}) {
			t.Fatalf("resumed rotation = %+v, %v; want 3 resealed and ws9/FOREIGN reported", rot, err)
		}
		for wsName, want := range values {
			ws, name, _ := strings.Cut(wsName, "/")
			if v, err := openOf(t, s, current, ws, name); err != nil || v != want {
				t.Fatalf("%s with the new key: %q, %v", wsName, v, err)
			}
			if _, err := openOf(t, s, old, ws, name); !errors.Is(err, secrets.ErrOpen) {
				t.Fatalf("%s still opens with the old key: %v", wsName, err)
			}
			if r := sealedOf(t, s, ws, name); r.KeyID != current.ID() || r.Version != 1 {
				t.Fatalf("%s: key %s version %d, want the new key, version 1 kept", wsName, r.KeyID, r.Version)
			}
		}
		if v, err := openOf(t, s, third, "ws9", "FOREIGN"); err != nil || v != "third" {
			t.Fatalf("the foreign row was touched: %q, %v", v, err)
		}
		again, err := s.RotateSecretsKey(ctx, old, current, 2)
		if err != nil || again.Resealed != 0 || len(again.Foreign) != 1 {
			t.Fatalf("second rotation = %+v, %v; want nothing resealed", again, err)
		}
		if got := auditOf(t, s, "ws0"); len(got) != 4 {
			t.Fatalf("rotation audited as changes: %q", got)
		}
		if _, err := s.RotateSecretsKey(ctx, current, current, 0); err == nil {
			t.Fatal("rotating to the same key succeeded")
		}
	})
}
