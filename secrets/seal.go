package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
)

// NonceSize is the length of the random nonce that prefixes a ciphertext.
const NonceSize = 12

// Overhead is how much longer a sealed value is than its padded value:
// the nonce and GCM's 16-byte tag.
const Overhead = NonceSize + 16

// PadBlock is the multiple a value is padded to before sealing, so the
// stored length shows a value's size to within PadBlock bytes only.
const PadBlock = 64

// SealedLen is the stored length of a sealed value of n bytes.
func SealedLen(n int) int { return (n/PadBlock+1)*PadBlock + Overhead }

// ErrOpen means a ciphertext did not open: it was sealed with another key,
// for another (workspace, name, version), or altered. AES-GCM cannot tell
// these apart, and telling them apart would help an attacker.
var ErrOpen = errors.New("secret does not open: sealed with another key, for another secret, or altered")

// Seal encrypts value for the row (workspace, name, version) with AES-256-GCM
// under key: the value padded to a multiple of PadBlock, a fresh random
// nonce prefixed to the ciphertext, and the row bound as associated data.
// Two seals of one value differ.
func Seal(key Key, workspace, name string, version int64, value []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	padded := pad(value)
	defer clear(padded)
	out := make([]byte, NonceSize, NonceSize+len(padded)+aead.Overhead())
	if _, err := rand.Read(out); err != nil {
		return nil, fmt.Errorf("seal secret %s: nonce: %w", name, err)
	}
	return aead.Seal(out, out, padded, associatedData(workspace, name, version)), nil
}

// pad appends 0x80 and then zeros up to the next multiple of PadBlock
// (ISO/IEC 7816-4), so any value, one ending in 0x80 included, unpads
// to itself.
func pad(value []byte) []byte {
	out := make([]byte, (len(value)/PadBlock+1)*PadBlock)
	copy(out, value)
	out[len(value)] = 0x80
	return out
}

// unpad strips what pad appended; ok is false for text pad did not make.
func unpad(padded []byte) (value []byte, ok bool) {
	i := len(padded) - 1
	for i >= 0 && padded[i] == 0 {
		i--
	}
	if i < 0 || padded[i] != 0x80 || len(padded)%PadBlock != 0 || len(padded)-i > PadBlock {
		return nil, false
	}
	return padded[:i], true
}

// Open decrypts sealed, which Seal made for the same (workspace, name,
// version) under key; ErrOpen (wrapped with the row and the key's ID)
// otherwise.
func Open(key Key, workspace, name string, version int64, sealed []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < NonceSize+aead.Overhead() {
		return nil, fmt.Errorf("open secret %s@%d of workspace %s: %w", name, version, workspace, ErrOpen)
	}
	padded, err := aead.Open(nil, sealed[:NonceSize], sealed[NonceSize:], associatedData(workspace, name, version))
	if err != nil {
		return nil, fmt.Errorf("open secret %s@%d of workspace %s with key %s: %w", name, version, workspace, key.ID(), ErrOpen)
	}
	value, ok := unpad(padded)
	if !ok {
		// Authentic, so sealed by a key holder, but not by Seal.
		clear(padded)
		return nil, fmt.Errorf("open secret %s@%d of workspace %s: bad padding: %w", name, version, workspace, ErrOpen)
	}
	return value, nil
}

// newAEAD is AES-256-GCM under key; the zero Key is ErrNoKey.
func newAEAD(key Key) (cipher.AEAD, error) {
	if key.IsZero() {
		return nil, ErrNoKey
	}
	block, err := aes.NewCipher(key.b[:])
	if err != nil {
		return nil, fmt.Errorf("secrets cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets cipher: %w", err)
	}
	return aead, nil
}

// associatedData is the row a ciphertext belongs to: workspace and name
// each prefixed with its length (so "ab"+"c" and "a"+"bc" differ), then the
// version, all big-endian.
func associatedData(workspace, name string, version int64) []byte {
	b := make([]byte, 0, 4+len(workspace)+4+len(name)+8)
	b = binary.BigEndian.AppendUint32(b, uint32(len(workspace)))
	b = append(b, workspace...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(name)))
	b = append(b, name...)
	return binary.BigEndian.AppendUint64(b, uint64(version))
}
