package events

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// NewID returns a UUIDv7 (RFC 9562) for an event at at: the Unix
// milliseconds of at in the first 48 bits, then the version, 74 random
// bits and the variant. Ids of events of one millisecond are in no
// particular order; the outbox's seq is the order.
func NewID(at time.Time) (uuid.UUID, error) {
	var id uuid.UUID
	if _, err := rand.Read(id[6:]); err != nil {
		return uuid.Nil, fmt.Errorf("new event id: %w", err)
	}
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(max(at.UnixMilli(), 0)))
	copy(id[:6], ms[2:])
	id[6] = id[6]&0x0f | 0x70
	id[8] = id[8]&0x3f | 0x80
	return id, nil
}
