package drivertest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/auth"
	"github.com/windforce/windforce/catalog"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store/driver"
)

var (
	_ = register("Auth", testAuth)
	_ = register("Session", testSession)
	_ = register("Webhook", testWebhook)
)

// authBase is the auth cases' reference time, on a whole second so both
// databases keep it exactly.
var authBase = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

// authToken stores a fresh run token of ws through ex.
func authToken(t *testing.T, ex driver.Executor, label string) auth.Token {
	t.Helper()
	_, tok, err := auth.NewToken("ws", label, []auth.Scope{auth.ScopeRun, auth.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	tok.CreatedAt = authBase
	if err := ex.AuthCreateToken(t.Context(), tok); err != nil {
		t.Fatalf("AuthCreateToken: %v", err)
	}
	return tok
}

// authSession stores an open session of token id from created for ttl.
func authSession(t *testing.T, ex driver.Executor, tokenID string, created time.Time, ttl time.Duration) auth.Session {
	t.Helper()
	_, hash, err := auth.NewSessionID()
	if err != nil {
		t.Fatal(err)
	}
	s := auth.Session{IDHash: hash, TokenHash: auth.Hash("text of " + tokenID), TokenID: tokenID,
		CreatedAt: created, ExpiresAt: created.Add(ttl)}
	if err := ex.SessionInsert(t.Context(), s); err != nil {
		t.Fatalf("SessionInsert: %v", err)
	}
	return s
}

// authSessionOf reads the session with that hash; found is false when
// there is none.
func authSessionOf(t *testing.T, ex driver.Executor, hash string) (s auth.Session, found bool) {
	t.Helper()
	s, found, err := ex.SessionByHash(t.Context(), hash)
	if err != nil {
		t.Fatalf("SessionByHash: %v", err)
	}
	return s, found
}

// testAuth checks the token and lease operations.
func testAuth(t *testing.T, open Open) {
	t.Run("CreateAndRead", func(t *testing.T) { testAuthCreateAndRead(t, open) })
	t.Run("CreateZeroTimeIsNow", func(t *testing.T) { testAuthCreateZeroTimeIsNow(t, open) })
	t.Run("CreateDuplicate", func(t *testing.T) { testAuthCreateDuplicate(t, open) })
	t.Run("Revoke", func(t *testing.T) { testAuthRevoke(t, open) })
	t.Run("EndSessions", func(t *testing.T) { testAuthEndSessions(t, open) })
	t.Run("LeaseLive", func(t *testing.T) { testAuthLeaseLive(t, open) })
}

func testAuthCreateAndRead(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	tok := authToken(t, ex, "deploy bot")
	got, ok, err := ex.AuthTokenByHash(t.Context(), tok.Hash)
	if err != nil || !ok || got.ID != tok.ID || got.Hash != tok.Hash || got.Workspace != "ws" ||
		auth.JoinScopes(got.Scopes) != "run,read" || got.Label != "deploy bot" || !got.CreatedAt.Equal(authBase) {
		t.Fatalf("AuthTokenByHash = %+v, %v, %v", got, ok, err)
	}
	got, ok, err = ex.AuthTokenByID(t.Context(), tok.ID)
	if err != nil || !ok || got.Hash != tok.Hash || got.Label != "deploy bot" || !got.CreatedAt.Equal(authBase) ||
		!got.RevokedAt.IsZero() {
		t.Fatalf("AuthTokenByID = %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := ex.AuthTokenByHash(t.Context(), auth.Hash("unknown")); ok || err != nil {
		t.Fatalf("AuthTokenByHash of an unknown hash: ok %v, %v", ok, err)
	}
	if _, ok, err := ex.AuthTokenByID(t.Context(), "ffff"); ok || err != nil {
		t.Fatalf("AuthTokenByID of an unknown id: ok %v, %v", ok, err)
	}
}

func testAuthCreateZeroTimeIsNow(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	_, tok, err := auth.NewToken("ws", "", []auth.Scope{auth.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Minute)
	if err := ex.AuthCreateToken(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	got, _, err := ex.AuthTokenByID(t.Context(), tok.ID)
	if err != nil || got.CreatedAt.Before(before) || got.CreatedAt.After(time.Now().Add(time.Minute)) {
		t.Fatalf("created_at of a zero CreatedAt = %v, %v; want about now", got.CreatedAt, err)
	}
}

func testAuthCreateDuplicate(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	tok := authToken(t, ex, "a")
	_, again, err := auth.NewToken("ws", "b", []auth.Scope{auth.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	again.ID = tok.ID
	if err := ex.AuthCreateToken(t.Context(), again); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("AuthCreateToken of a taken id: %v, want spine.ErrConflict", err)
	}
	_, again, _ = auth.NewToken("ws", "c", []auth.Scope{auth.ScopeRead})
	again.Hash = tok.Hash
	if err := ex.AuthCreateToken(t.Context(), again); !errors.Is(err, spine.ErrConflict) {
		t.Fatalf("AuthCreateToken of a taken hash: %v, want spine.ErrConflict", err)
	}
}

func testAuthRevoke(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	tok, other := authToken(t, ex, "a"), authToken(t, ex, "b")
	at := authBase.Add(time.Hour)
	if ok, err := ex.AuthRevokeToken(t.Context(), tok.ID, at); !ok || err != nil {
		t.Fatalf("AuthRevokeToken = %v, %v; want true", ok, err)
	}
	if _, ok, err := ex.AuthTokenByHash(t.Context(), tok.Hash); ok || err != nil {
		t.Fatalf("AuthTokenByHash of a revoked token: ok %v, %v; want none", ok, err)
	}
	got, ok, err := ex.AuthTokenByID(t.Context(), tok.ID)
	if err != nil || !ok || !got.RevokedAt.Equal(at) {
		t.Fatalf("AuthTokenByID of a revoked token = %+v, %v, %v; want RevokedAt %v", got, ok, err, at)
	}
	if ok, err := ex.AuthRevokeToken(t.Context(), tok.ID, at.Add(time.Hour)); ok || err != nil {
		t.Fatalf("AuthRevokeToken twice = %v, %v; want false", ok, err)
	}
	if got, _, _ := ex.AuthTokenByID(t.Context(), tok.ID); !got.RevokedAt.Equal(at) {
		t.Fatalf("a second revocation moved revoked_at to %v", got.RevokedAt)
	}
	if ok, err := ex.AuthRevokeToken(t.Context(), "ffff", at); ok || err != nil {
		t.Fatalf("AuthRevokeToken of an unknown id = %v, %v; want false", ok, err)
	}
	if _, ok, _ := ex.AuthTokenByHash(t.Context(), other.Hash); !ok {
		t.Fatal("revoking one token revoked another")
	}
}

func testAuthEndSessions(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	tok, other := authToken(t, ex, "a"), authToken(t, ex, "b")
	open1 := authSession(t, ex, tok.ID, authBase, time.Hour)
	ended := authSession(t, ex, tok.ID, authBase, time.Hour)
	others := authSession(t, ex, other.ID, authBase, time.Hour)
	if err := ex.SessionEnd(t.Context(), ended.IDHash, authBase.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	at := authBase.Add(2 * time.Minute)
	if err := ex.AuthEndSessions(t.Context(), tok.ID, at); err != nil {
		t.Fatalf("AuthEndSessions: %v", err)
	}
	if s, _ := authSessionOf(t, ex, open1.IDHash); !s.EndedAt.Equal(at) {
		t.Errorf("open session of the token ended at %v, want %v", s.EndedAt, at)
	}
	if s, _ := authSessionOf(t, ex, ended.IDHash); !s.EndedAt.Equal(authBase.Add(time.Minute)) {
		t.Errorf("an ended session's ended_at moved to %v", s.EndedAt)
	}
	if s, _ := authSessionOf(t, ex, others.IDHash); !s.EndedAt.IsZero() {
		t.Errorf("another token's session ended at %v", s.EndedAt)
	}
	if err := ex.AuthEndSessions(t.Context(), "ffff", at); err != nil {
		t.Fatalf("AuthEndSessions of a token without sessions: %v", err)
	}
}

func testAuthLeaseLive(t *testing.T, open Open) {
	t.Parallel()
	ex := open(t).Executor()
	p, err := spine.PrepareEnqueue(spine.EnqueueParams{Workspace: "ws", TriggerKind: spine.TriggerAPI,
		Input: json.RawMessage(`{}`), Pin: spine.Pin{AppKey: "app", ActionKey: "act", Tag: "lease",
			Timeout: time.Minute, Retry: spine.DefaultRetry}}, authBase)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ex.EnqueueInsert(t.Context(), p, false); err != nil {
		t.Fatal(err)
	}
	live := func(ws string, id, claim uuid.UUID) bool {
		t.Helper()
		ok, err := ex.AuthLeaseLive(t.Context(), ws, id, claim)
		if err != nil {
			t.Fatalf("AuthLeaseLive: %v", err)
		}
		return ok
	}
	if live("ws", p.ID, uuid.Nil) || live("ws", uuid.New(), uuid.New()) {
		t.Fatal("a lease is live for a waiting job, or an unknown one")
	}
	claimed, err := ex.Claim(t.Context(), spine.ClaimParams{Worker: "w1", Tags: []string{"lease"}, Limit: 1, Now: authBase})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("Claim = %v, %v", claimed, err)
	}
	c := claimed[0]
	if !live("ws", c.ID, c.ClaimToken) {
		t.Fatal("the claim of a running job is not live")
	}
	if live("other", c.ID, c.ClaimToken) || live("ws", c.ID, uuid.New()) {
		t.Fatal("a lease is live in another workspace or with another claim token")
	}
}

// testSession checks the console session operations.
func testSession(t *testing.T, open Open) {
	t.Run("InsertAndRead", func(t *testing.T) {
		t.Parallel()
		ex := open(t).Executor()
		s := authSession(t, ex, auth.AdminID, authBase, time.Hour)
		got, ok := authSessionOf(t, ex, s.IDHash)
		if !ok || got.IDHash != s.IDHash || got.TokenHash != s.TokenHash || got.TokenID != auth.AdminID ||
			!got.CreatedAt.Equal(authBase) || !got.ExpiresAt.Equal(authBase.Add(time.Hour)) || !got.EndedAt.IsZero() {
			t.Fatalf("SessionByHash = %+v, %v; want %+v", got, ok, s)
		}
		if _, ok := authSessionOf(t, ex, auth.Hash("unknown")); ok {
			t.Fatal("SessionByHash found an unknown session")
		}
	})
	t.Run("InsertDuplicate", func(t *testing.T) {
		t.Parallel()
		ex := open(t).Executor()
		s := authSession(t, ex, "abcd", authBase, time.Hour)
		if err := ex.SessionInsert(t.Context(), s); !errors.Is(err, spine.ErrConflict) {
			t.Fatalf("SessionInsert of a taken id hash: %v, want spine.ErrConflict", err)
		}
	})
	t.Run("End", func(t *testing.T) {
		t.Parallel()
		ex := open(t).Executor()
		s := authSession(t, ex, "abcd", authBase, time.Hour)
		for _, at := range []time.Time{authBase.Add(time.Minute), authBase.Add(2 * time.Minute)} {
			if err := ex.SessionEnd(t.Context(), s.IDHash, at); err != nil {
				t.Fatalf("SessionEnd: %v", err)
			}
		}
		if got, _ := authSessionOf(t, ex, s.IDHash); !got.EndedAt.Equal(authBase.Add(time.Minute)) {
			t.Fatalf("ended_at = %v, want the first end %v", got.EndedAt, authBase.Add(time.Minute))
		}
		if err := ex.SessionEnd(t.Context(), auth.Hash("unknown"), authBase); err != nil {
			t.Fatalf("SessionEnd of an unknown session: %v", err)
		}
	})
	t.Run("DeleteExpired", func(t *testing.T) {
		t.Parallel()
		ex := open(t).Executor()
		now := authBase.Add(2 * time.Hour)
		gone := authSession(t, ex, "abcd", authBase, time.Hour)
		edge := authSession(t, ex, "abcd", authBase, 2*time.Hour) // expires exactly at now
		kept := authSession(t, ex, "abcd", authBase, 3*time.Hour)
		if err := ex.SessionDeleteExpired(t.Context(), now); err != nil {
			t.Fatalf("SessionDeleteExpired: %v", err)
		}
		for _, s := range []auth.Session{gone, edge} {
			if _, ok := authSessionOf(t, ex, s.IDHash); ok {
				t.Errorf("session expired at %v survived a clean-up at %v", s.ExpiresAt, now)
			}
		}
		if _, ok := authSessionOf(t, ex, kept.IDHash); !ok {
			t.Error("a session not yet expired was deleted")
		}
	})
}

// authAction puts hello/greet in ws's catalog through ex.
func authAction(t *testing.T, ex driver.Executor) {
	t.Helper()
	err := ex.Tx(t.Context(), func(ex driver.Executor) error {
		if err := ex.CatalogPutSource(t.Context(), catalog.Source{Workspace: "ws", ID: "main", URL: "file:///r.git", Branch: "main"}); err != nil {
			return err
		}
		return ex.CatalogInsertApps(t.Context(), catalog.SyncParams{Workspace: "ws", SourceID: "main",
			Commit: strings.Repeat("c", 40), Now: authBase,
			Apps: []catalog.App{{Key: "hello", Entrypoint: "main.ts", Runtime: "bun", Timeout: time.Minute, Tag: "default",
				Retry: spine.DefaultRetry, Actions: []catalog.Action{{Key: "greet"}}}}})
	})
	if err != nil {
		t.Fatalf("put hello/greet in the catalog: %v", err)
	}
}

// testWebhook checks the webhook secret and replay ledger operations.
func testWebhook(t *testing.T, open Open) {
	t.Run("PutSecret", func(t *testing.T) {
		t.Parallel()
		ex := open(t).Executor()
		if _, ok, err := ex.WebhookSecret(t.Context(), "ws", "hello", "greet"); ok || err != nil {
			t.Fatalf("WebhookSecret before any put: ok %v, %v", ok, err)
		}
		authAction(t, ex)
		for _, secret := range []string{"whsec_1", "whsec_2"} {
			if ok, err := ex.WebhookPutSecret(t.Context(), "ws", "hello", "greet", secret, authBase); !ok || err != nil {
				t.Fatalf("WebhookPutSecret = %v, %v; want true", ok, err)
			}
			if got, ok, err := ex.WebhookSecret(t.Context(), "ws", "hello", "greet"); got != secret || !ok || err != nil {
				t.Fatalf("WebhookSecret = %q, %v, %v; want %q", got, ok, err, secret)
			}
		}
		if ok, err := ex.WebhookPutSecret(t.Context(), "ws", "hello", "greet", "whsec_3", time.Time{}); !ok || err != nil {
			t.Fatalf("WebhookPutSecret at the database's clock = %v, %v", ok, err)
		}
	})
	t.Run("PutSecretNoAction", func(t *testing.T) {
		t.Parallel()
		ex := open(t).Executor()
		authAction(t, ex)
		for _, key := range [][3]string{{"ws", "hello", "nope"}, {"ws", "nope", "greet"}, {"other", "hello", "greet"}} {
			ok, err := ex.WebhookPutSecret(t.Context(), key[0], key[1], key[2], "whsec_x", authBase)
			if ok || err != nil {
				t.Errorf("WebhookPutSecret of %v = %v, %v; want false", key, ok, err)
			}
			if _, ok, _ := ex.WebhookSecret(t.Context(), key[0], key[1], key[2]); ok {
				t.Errorf("WebhookPutSecret of %v wrote a secret", key)
			}
		}
	})
	t.Run("SeenAndForget", func(t *testing.T) {
		t.Parallel()
		ex := open(t).Executor()
		sig, other := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
		if ok, err := ex.WebhookSeen(t.Context(), sig, authBase); !ok || err != nil {
			t.Fatalf("WebhookSeen = %v, %v; want true", ok, err)
		}
		if ok, err := ex.WebhookSeen(t.Context(), sig, authBase.Add(time.Minute)); ok || err != nil {
			t.Fatalf("WebhookSeen of a replay = %v, %v; want false", ok, err)
		}
		if ok, err := ex.WebhookSeen(t.Context(), other, authBase.Add(time.Hour)); !ok || err != nil {
			t.Fatalf("WebhookSeen of another signature = %v, %v; want true", ok, err)
		}
		// Strictly before: a record seen at before stays.
		if err := ex.WebhookForget(t.Context(), authBase); err != nil {
			t.Fatalf("WebhookForget: %v", err)
		}
		if ok, _ := ex.WebhookSeen(t.Context(), sig, authBase); ok {
			t.Fatal("WebhookForget deleted a record seen at before")
		}
		if err := ex.WebhookForget(t.Context(), authBase.Add(time.Second)); err != nil {
			t.Fatalf("WebhookForget: %v", err)
		}
		if ok, err := ex.WebhookSeen(t.Context(), sig, authBase.Add(2*time.Hour)); !ok || err != nil {
			t.Fatalf("WebhookSeen after the record was forgotten = %v, %v; want true", ok, err)
		}
		if ok, _ := ex.WebhookSeen(t.Context(), other, authBase.Add(2*time.Hour)); ok {
			t.Fatal("WebhookForget deleted a record seen after before")
		}
	})
	t.Run("SeenRolledBack", func(t *testing.T) {
		t.Parallel()
		ex := open(t).Executor()
		sig := strings.Repeat("ef", 32)
		refused := errors.New("enqueue refused")
		err := ex.Tx(t.Context(), func(ex driver.Executor) error {
			if ok, err := ex.WebhookSeen(t.Context(), sig, authBase); !ok || err != nil {
				t.Errorf("WebhookSeen in a transaction = %v, %v", ok, err)
			}
			return refused
		})
		if !errors.Is(err, refused) {
			t.Fatalf("Tx = %v", err)
		}
		if ok, err := ex.WebhookSeen(t.Context(), sig, authBase); !ok || err != nil {
			t.Fatalf("WebhookSeen after a rolled-back record = %v, %v; want true", ok, err)
		}
	})
}
