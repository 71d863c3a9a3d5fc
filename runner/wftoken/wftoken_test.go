package wftoken

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
)

func TestMintVerify(t *testing.T) {
	t.Parallel()
	secret := []byte("s3cret")
	now := time.Unix(1_800_000_000, 0)
	c := Claims{JobID: uuid.New(), Workspace: "acme", ClaimToken: uuid.New(), Expiry: now.Add(time.Minute)}
	tok, err := Mint(secret, c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Verify(secret, tok, now)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if got.JobID != c.JobID || got.ClaimToken != c.ClaimToken || got.Workspace != "acme" || !got.Expiry.Equal(c.Expiry) {
		t.Fatalf("claims: got %+v want %+v", got, c)
	}
	tampered := strings.Replace(tok, "wf1.e", "wf1.f", 1)
	for name, tc := range map[string]struct {
		secret []byte
		token  string
		now    time.Time
	}{
		"expired":      {secret, tok, now.Add(time.Minute)},
		"other secret": {[]byte("other"), tok, now},
		"tampered":     {secret, tampered, now},
		"garbage":      {secret, "wf1.x", now},
		"empty secret": {nil, tok, now},
	} {
		if _, err := Verify(tc.secret, tc.token, tc.now); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: want ErrInvalid, got %v", name, err)
		}
	}
}
