package postgres

import (
	"testing"

	"github.com/google/uuid"

	"github.com/windforce/windforce/spine"
)

// A job line that does not decode is refused (the listener then delivers
// the lease alone and the worker reads the job), never half-built.
func TestDecodeNotifiedJobRefusesWhatItCannotRead(t *testing.T) {
	l := spine.Lease{JobID: uuid.New(), ClaimToken: uuid.New()}
	for _, body := range []string{`{`, `{"job":{"created_at":"yesterday"}}`, `{"job":{"env":"[1"}}`} {
		if job, err := decodeNotifiedJob(l, body); err == nil {
			t.Errorf("%s decoded to %+v", body, job)
		}
	}
}
