package drivertest

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/windforce/windforce/secrets"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var _ = register("Secret", testSecret)

// secretBase is the secret cases' reference time, on a whole second so
// both databases keep it exactly.
var secretBase = time.Date(2031, 7, 8, 9, 10, 11, 0, time.UTC)

// testSecret checks the secret and secret audit operations.
func testSecret(t *testing.T, open Open) {
	t.Run("NextVersion", func(t *testing.T) { testSecretNextVersion(t, open) })
	t.Run("InsertListReplace", func(t *testing.T) { testSecretInsertListReplace(t, open) })
	t.Run("DeleteKeepsTheCounter", func(t *testing.T) { testSecretDeleteKeepsTheCounter(t, open) })
	t.Run("Sealed", func(t *testing.T) { testSecretSealed(t, open) })
	t.Run("Audit", func(t *testing.T) { testSecretAudit(t, open) })
	t.Run("RotateBatch", func(t *testing.T) { testSecretRotateBatch(t, open) })
	t.Run("Reseal", func(t *testing.T) { testSecretReseal(t, open) })
}

// secretRow is a row of ws with a placeholder ciphertext that tells its
// version and key apart (the driver does not open it).
func secretRow(ws, name string, version int64, keyID string) driver.SecretRow {
	c := bytes.Repeat([]byte{byte(version)}, 40)
	c = append(c, keyID...)
	return driver.SecretRow{Workspace: ws, Name: name, Version: version, Description: "about " + name,
		Ciphertext: c, KeyID: keyID, UpdatedBy: "token:alice", Now: secretBase.Add(time.Duration(version) * time.Second)}
}

// mustInsertSecret inserts r through ex.
func mustInsertSecret(t *testing.T, ex driver.Executor, r driver.SecretRow) {
	t.Helper()
	if _, err := ex.SecretInsert(t.Context(), r); err != nil {
		t.Fatalf("SecretInsert %s: %v", r.Name, err)
	}
}

func testSecretNextVersion(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	next := func(ws, name string) int64 {
		t.Helper()
		v, err := ex.SecretNextVersion(t.Context(), ws, name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for want := int64(1); want <= 3; want++ {
		if v := next("ws", "A"); v != want {
			t.Fatalf("SecretNextVersion(ws, A) = %d, want %d", v, want)
		}
	}
	if v, w := next("ws", "B"), next("ws2", "A"); v != 1 || w != 1 {
		t.Fatalf("another name's first version %d, another workspace's %d; want 1 and 1", v, w)
	}
	// A transaction that rolls back hands its version back.
	boom := errors.New("boom")
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		if _, err := ex.SecretNextVersion(t.Context(), "ws", "A"); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if v := next("ws", "A"); v != 4 {
		t.Fatalf("after a rolled-back take, SecretNextVersion = %d, want 4", v)
	}
}

func testSecretInsertListReplace(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	b := secretRow("ws", "B_TOKEN", 1, "k1")
	at, err := ex.SecretInsert(ctx, b)
	if err != nil || !at.Equal(b.Now) {
		t.Fatalf("SecretInsert = %v, %v; want updated_at %v", at, err, b.Now)
	}
	mustInsertSecret(t, ex, secretRow("ws", "A_TOKEN", 1, "k1"))
	mustInsertSecret(t, ex, secretRow("other", "C", 1, "k1"))
	if _, err := ex.SecretInsert(ctx, secretRow("ws", "B_TOKEN", 2, "k1")); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("SecretInsert of a name held = %v, want spine.ErrConflict", err)
	}
	list, err := ex.SecretList(ctx, "ws")
	if err != nil || len(list) != 2 || list[0].Name != "A_TOKEN" || list[1].Name != "B_TOKEN" {
		t.Fatalf("SecretList = %+v, %v; want A_TOKEN, B_TOKEN", list, err)
	}
	want := secrets.Secret{Workspace: "ws", Name: "B_TOKEN", Description: "about B_TOKEN", Version: 1,
		UpdatedAt: b.Now, UpdatedBy: "token:alice"}
	if list[1] != want {
		t.Fatalf("listed %+v, want %+v", list[1], want)
	}

	r := secretRow("ws", "B_TOKEN", 2, "k2")
	r.Description, r.UpdatedBy = "rotated", "token:bob"
	at, ok, err := ex.SecretReplace(ctx, r)
	if err != nil || !ok || !at.Equal(r.Now) {
		t.Fatalf("SecretReplace = %v, %v, %v", at, ok, err)
	}
	sealed, err := ex.SecretsSealed(ctx, "ws", []string{"B_TOKEN"})
	if err != nil || len(sealed) != 1 || sealed[0].Version != 2 || sealed[0].KeyID != "k2" ||
		!bytes.Equal(sealed[0].Ciphertext, r.Ciphertext) {
		t.Fatalf("after SecretReplace, SecretsSealed = %+v, %v", sealed, err)
	}
	list, _ = ex.SecretList(ctx, "ws")
	if got := list[1]; got.Version != 2 || got.Description != "rotated" || got.UpdatedBy != "token:bob" || !got.UpdatedAt.Equal(r.Now) {
		t.Fatalf("after SecretReplace, listed %+v", got)
	}
	if _, ok, err := ex.SecretReplace(ctx, secretRow("ws", "NOPE", 1, "k1")); ok || err != nil {
		t.Fatalf("SecretReplace of no secret = %v, %v; want not ok", ok, err)
	}
	if list, _ := ex.SecretList(ctx, "ws"); len(list) != 2 {
		t.Fatalf("SecretReplace of no secret created one: %+v", list)
	}
	zero := secretRow("ws", "NOW", 1, "k1")
	zero.Now = time.Time{}
	before := time.Now().Add(-time.Minute)
	if at, err := ex.SecretInsert(ctx, zero); err != nil || at.Before(before) || at.After(time.Now().Add(time.Minute)) {
		t.Fatalf("SecretInsert with a zero Now: updated_at %v, %v; want about now", at, err)
	}
}

func testSecretDeleteKeepsTheCounter(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	for range 2 {
		if _, err := ex.SecretNextVersion(ctx, "ws", "A"); err != nil {
			t.Fatal(err)
		}
	}
	mustInsertSecret(t, ex, secretRow("ws", "A", 2, "k1"))
	v, ok, err := ex.SecretDelete(ctx, "ws", "A")
	if err != nil || !ok || v != 2 {
		t.Fatalf("SecretDelete = %d, %v, %v; want version 2", v, ok, err)
	}
	if _, ok, err := ex.SecretDelete(ctx, "ws", "A"); ok || err != nil {
		t.Fatalf("second SecretDelete = %v, %v; want not ok", ok, err)
	}
	if list, err := ex.SecretList(ctx, "ws"); err != nil || len(list) != 0 {
		t.Fatalf("SecretList after delete = %+v, %v", list, err)
	}
	if v, err := ex.SecretNextVersion(ctx, "ws", "A"); err != nil || v != 3 {
		t.Fatalf("SecretNextVersion after delete = %d, %v; want 3 (never reused)", v, err)
	}
}

func testSecretSealed(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	mustInsertSecret(t, ex, secretRow("ws", "A", 1, "k1"))
	mustInsertSecret(t, ex, secretRow("ws", "B", 3, "k2"))
	mustInsertSecret(t, ex, secretRow("other", "C", 1, "k1"))
	got, err := ex.SecretsSealed(ctx, "ws", []string{"B", "C", "A", "MISSING"})
	if err != nil || len(got) != 2 {
		t.Fatalf("SecretsSealed = %+v, %v; want A and B", got, err)
	}
	b := secretRow("ws", "B", 3, "k2")
	if got[0].Name != "A" || got[1].Name != "B" || got[1].Version != 3 || got[1].KeyID != "k2" ||
		!bytes.Equal(got[1].Ciphertext, b.Ciphertext) {
		t.Fatalf("SecretsSealed = %+v", got)
	}
	if got, err := ex.SecretsSealed(ctx, "other", []string{"A"}); err != nil || len(got) != 0 {
		t.Fatalf("another workspace's SecretsSealed = %+v, %v; want none", got, err)
	}
}

func testSecretAudit(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	actions := []secrets.Action{secrets.ActionCreate, secrets.ActionReplace, secrets.ActionDelete}
	for i, a := range actions {
		e := secrets.AuditEntry{Workspace: "ws", Name: "A", Action: a, Version: int64(i + 1), Actor: "token:alice",
			At: secretBase.Add(time.Duration(i) * time.Second)}
		if err := ex.SecretAuditInsert(ctx, e); err != nil {
			t.Fatal(err)
		}
		if err := ex.SecretAuditInsert(ctx, secrets.AuditEntry{Workspace: "other", Name: "A", Action: a, Version: 1, Actor: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := ex.SecretAuditList(ctx, "ws", 0, 10)
	if err != nil || len(all) != 3 {
		t.Fatalf("SecretAuditList = %+v, %v; want 3", all, err)
	}
	for i, e := range all {
		j := 2 - i
		if e.Action != actions[j] || e.Version != int64(j+1) || e.Workspace != "ws" || e.Name != "A" ||
			e.Actor != "token:alice" || !e.At.Equal(secretBase.Add(time.Duration(j)*time.Second)) {
			t.Fatalf("entry %d = %+v, want %s of version %d", i, e, actions[j], j+1)
		}
	}
	if !(all[0].ID > all[1].ID && all[1].ID > all[2].ID) {
		t.Fatalf("ids %d %d %d, want newest first", all[0].ID, all[1].ID, all[2].ID)
	}
	page, err := ex.SecretAuditList(ctx, "ws", 0, 2)
	if err != nil || len(page) != 2 || page[1].ID != all[1].ID {
		t.Fatalf("first page = %+v, %v", page, err)
	}
	rest, err := ex.SecretAuditList(ctx, "ws", page[1].ID, 2)
	if err != nil || len(rest) != 1 || rest[0].ID != all[2].ID {
		t.Fatalf("page below %d = %+v, %v; want the oldest only", page[1].ID, rest, err)
	}
	if _, err := ex.SecretAuditList(ctx, "ws", 0, 10); err != nil {
		t.Fatal(err)
	}
	bad := secrets.AuditEntry{Workspace: "ws", Name: "A", Action: "peek", Version: 1, Actor: "x"}
	if err := ex.SecretAuditInsert(ctx, bad); err == nil {
		t.Fatal("SecretAuditInsert of an unknown action succeeded")
	}
}

func testSecretRotateBatch(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	for _, r := range []driver.SecretRow{
		secretRow("a", "X", 1, "old"), secretRow("a", "Y", 1, "new"), secretRow("a", "Z", 2, "old"),
		secretRow("b", "A", 1, "third"), secretRow("b", "B", 1, "old"),
	} {
		mustInsertSecret(t, ex, r)
	}
	names := func(rows []driver.SealedRow) []string {
		var out []string
		for _, r := range rows {
			out = append(out, r.Workspace+"/"+r.Name+"/"+r.KeyID)
		}
		return out
	}
	first, err := ex.SecretRotateBatch(ctx, "new", "", "", 2)
	if err != nil || !slices.Equal(names(first), []string{"a/X/old", "a/Z/old"}) {
		t.Fatalf("first batch = %v, %v", names(first), err)
	}
	if z := first[1]; z.Version != 2 || !bytes.Equal(z.Ciphertext, secretRow("a", "Z", 2, "old").Ciphertext) {
		t.Fatalf("batch row = %+v", z)
	}
	second, err := ex.SecretRotateBatch(ctx, "new", "a", "Z", 2)
	if err != nil || !slices.Equal(names(second), []string{"b/A/third", "b/B/old"}) {
		t.Fatalf("second batch = %v, %v", names(second), err)
	}
	if last, err := ex.SecretRotateBatch(ctx, "new", "b", "B", 2); err != nil || len(last) != 0 {
		t.Fatalf("after the last row = %v, %v", names(last), err)
	}
}

func testSecretReseal(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	ctx := t.Context()
	mustInsertSecret(t, ex, secretRow("ws", "A", 2, "old"))
	fresh := bytes.Repeat([]byte{9}, 41)
	for _, c := range []struct {
		version int64
		oldKey  string
	}{{1, "old"}, {2, "other"}} {
		if ok, err := ex.SecretReseal(ctx, "ws", "A", c.version, c.oldKey, "new", fresh); ok || err != nil {
			t.Fatalf("SecretReseal of version %d from key %s = %v, %v; want fenced off", c.version, c.oldKey, ok, err)
		}
	}
	if ok, err := ex.SecretReseal(ctx, "ws", "A", 2, "old", "new", fresh); !ok || err != nil {
		t.Fatalf("SecretReseal = %v, %v", ok, err)
	}
	got, err := ex.SecretsSealed(ctx, "ws", []string{"A"})
	if err != nil || len(got) != 1 || got[0].KeyID != "new" || got[0].Version != 2 || !bytes.Equal(got[0].Ciphertext, fresh) {
		t.Fatalf("after SecretReseal: %+v, %v", got, err)
	}
	if ok, err := ex.SecretReseal(ctx, "ws", "A", 2, "old", "new", fresh); ok || err != nil {
		t.Fatalf("SecretReseal again = %v, %v; want nothing to do", ok, err)
	}
}
