package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func testKey(t *testing.T, fill byte) Key {
	t.Helper()
	k, err := ParseKey(hex.EncodeToString(bytes.Repeat([]byte{fill}, KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestKeyFromConfig: WINDFORCE_SECRETS_KEY wins in hex or base64, anything
// else is a clear error that does not repeat it; without it the key is
// derived from WINDFORCE_SECRET, the same for the same secret.
func TestKeyFromConfig(t *testing.T) {
	t.Parallel()
	raw := bytes.Repeat([]byte{7}, KeySize)
	want := testKey(t, 7)
	for _, text := range []string{
		hex.EncodeToString(raw), strings.ToUpper(hex.EncodeToString(raw)),
		base64.StdEncoding.EncodeToString(raw), base64.RawStdEncoding.EncodeToString(raw),
		base64.RawURLEncoding.EncodeToString(raw), " " + hex.EncodeToString(raw) + "\n",
	} {
		k, err := KeyFromConfig(text, []byte("ignored"))
		if err != nil || k.ID() != want.ID() || k.b != want.b {
			t.Errorf("KeyFromConfig(%q) = %v, %v; want %v", text, k, err, want)
		}
	}
	for _, bad := range []string{"short", hex.EncodeToString(raw[:31]), base64.StdEncoding.EncodeToString(append(raw, 1)), strings.Repeat("zz", 32)} {
		_, err := KeyFromConfig(bad, nil)
		if !errors.Is(err, ErrBadKey) || strings.Contains(err.Error(), bad) {
			t.Errorf("KeyFromConfig(%q) = %v; want ErrBadKey without the text", bad, err)
		}
	}
	a, err := KeyFromConfig("", []byte("server secret"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := KeyFromConfig("", []byte("server secret"))
	c, _ := KeyFromConfig("", []byte("another secret"))
	if a.ID() != b.ID() || a.ID() == c.ID() || a.b == c.b || bytes.Equal(a.b[:], []byte("server secret")) {
		t.Fatalf("derived keys: %v %v %v; want the same for the same secret, another for another", a, b, c)
	}
	if _, err := KeyFromConfig("", nil); !errors.Is(err, ErrNoKey) {
		t.Fatalf("no configuration: %v, want ErrNoKey", err)
	}
}

// TestKeyDoesNotPrint: a Key in a log line shows its fingerprint only.
func TestKeyDoesNotPrint(t *testing.T) {
	t.Parallel()
	k := testKey(t, 0xab)
	for _, s := range []string{fmt.Sprint(k), fmt.Sprintf("%v %+v %#v %s", k, k, k, k)} {
		if strings.Contains(strings.ToLower(s), "abab") || strings.Contains(s, "171") || !strings.Contains(s, k.ID()) {
			t.Errorf("printed key %q shows its bytes or not its ID", s)
		}
	}
	if len(k.ID()) != 16 {
		t.Errorf("ID %q, want 16 hex digits", k.ID())
	}
}

// TestSealOpen: a value opens for its own row and key only; each seal
// differs; an altered or short ciphertext does not open.
func TestSealOpen(t *testing.T) {
	t.Parallel()
	k := testKey(t, 1)
	value := []byte("xoxb-slack-token")
	s1, err := Seal(k, "ws", "slack", 3, value)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := Seal(k, "ws", "slack", 3, value)
	if bytes.Equal(s1, s2) || bytes.Contains(s1, value) || len(s1) != PadBlock+Overhead {
		t.Fatalf("seals %x %x: want two different ciphertexts without the value, of %d bytes", s1, s2, PadBlock+Overhead)
	}
	got, err := Open(k, "ws", "slack", 3, s1)
	if err != nil || !bytes.Equal(got, value) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	altered := bytes.Clone(s1)
	altered[len(altered)-1] ^= 1
	for name, c := range map[string]struct {
		key     Key
		ws, n   string
		version int64
		sealed  []byte
	}{
		"other workspace":  {k, "ws2", "slack", 3, s1},
		"other name":       {k, "ws", "slack2", 3, s1},
		"other version":    {k, "ws", "slack", 4, s1},
		"shifted boundary": {k, "wss", "lack", 3, s1},
		"other key":        {testKey(t, 2), "ws", "slack", 3, s1},
		"altered":          {k, "ws", "slack", 3, altered},
		"short":            {k, "ws", "slack", 3, s1[:NonceSize+3]},
	} {
		if v, err := Open(c.key, c.ws, c.n, c.version, c.sealed); !errors.Is(err, ErrOpen) || v != nil {
			t.Errorf("%s: Open = %q, %v; want ErrOpen", name, v, err)
		}
	}
	if _, err := Seal(Key{}, "ws", "slack", 1, value); !errors.Is(err, ErrNoKey) {
		t.Errorf("Seal with the zero key: %v, want ErrNoKey", err)
	}
}

// TestPadding: the stored length shows a value's size to within PadBlock
// bytes; every value opens to itself, one ending in 0x80 or of a whole
// number of blocks included.
func TestPadding(t *testing.T) {
	t.Parallel()
	k := testKey(t, 1)
	for _, n := range []int{1, 2, PadBlock - 1, PadBlock, PadBlock + 1, 3 * PadBlock, MaxValueBytes} {
		for _, last := range []byte{'x', 0x80} {
			value := append(bytes.Repeat([]byte{'a'}, n-1), last)
			sealed, err := Seal(k, "ws", "A", 1, value)
			if err != nil {
				t.Fatal(err)
			}
			if len(sealed) != SealedLen(n) || len(sealed)-Overhead < n+1 || len(sealed)-Overhead > n+PadBlock {
				t.Fatalf("a value of %d bytes seals to %d bytes, want %d", n, len(sealed), SealedLen(n))
			}
			got, err := Open(k, "ws", "A", 1, sealed)
			if err != nil || !bytes.Equal(got, value) {
				t.Fatalf("value of %d bytes ending %#x opens to %d bytes, %v", n, last, len(got), err)
			}
		}
	}
	for _, bad := range [][]byte{nil, make([]byte, PadBlock), append(bytes.Repeat([]byte{'a'}, PadBlock-1), 'b'),
		append([]byte{0x80}, make([]byte, PadBlock)...)} {
		if v, ok := unpad(bad); ok {
			t.Errorf("unpad(%x) = %x, ok; want refused", bad, v)
		}
	}
}

// TestValid: names, values and descriptions per DESIGN §8, each refusal
// its own typed error, none repeating a value.
func TestValid(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "_", "SLACK_TOKEN", "x1", "_9", strings.Repeat("a", 64)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "1a", "a-b", "a b", "é", strings.Repeat("a", 65), "a\x00", "a.b"} {
		if err := ValidName(bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidName(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
	for v, want := range map[string]error{
		"s3cr3t":                             nil,
		"ünïcödé\nline two":                  nil,
		strings.Repeat("x", MaxValueBytes):   nil,
		"":                                   ErrEmptyValue,
		strings.Repeat("x", MaxValueBytes+1): ErrValueTooLarge,
		"a\x00b":                             ErrValueNotText,
		"bad \xff utf8":                      ErrValueNotText,
	} {
		err := ValidValue([]byte(v))
		if !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Errorf("ValidValue(%.20q) = %v, want %v", v, err, want)
		}
		if err != nil && v != "" && strings.Contains(err.Error(), v) {
			t.Errorf("ValidValue error %q repeats the value", err)
		}
	}
	for d, ok := range map[string]bool{
		"": true, "Slack bot token\nfor #ops\t(rotated monthly)": true, strings.Repeat("é", MaxDescriptionChars): true,
		strings.Repeat("a", MaxDescriptionChars+1): false, "bell\a": false, "nul\x00": false, "\xff": false,
	} {
		if err := ValidDescription(d); (err == nil) != ok || (err != nil && !errors.Is(err, ErrInvalidDescription)) {
			t.Errorf("ValidDescription(%.20q) = %v, want ok %v", d, err, ok)
		}
	}
}
