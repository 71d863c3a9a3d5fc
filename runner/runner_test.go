package runner

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/windforce/windforce/internal/testdb"
	"github.com/windforce/windforce/objectcache"
	"github.com/windforce/windforce/runner/wftoken"
	"github.com/windforce/windforce/spine"
)

// TestTokenBoundToClaim: WF_TOKEN names the job and this claim and expires
// at claim + timeout + kill grace.
func TestTokenBoundToClaim(t *testing.T) {
	t.Parallel()
	testdb.RequireSandbox(t)
	cache, err := objectcache.NewFileCache(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(Config{Store: &memLogs{}, Cache: cache, Dir: t.TempDir(), Secret: []byte("k"), KillGrace: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	started := time.Now().Truncate(time.Second)
	job := &spine.ClaimedJob{ID: uuid.New(), Workspace: "acme", ClaimToken: uuid.New(), StartedAt: started,
		Pin: spine.Pin{Timeout: 10 * time.Second}}
	tok, err := r.mintToken(job)
	if err != nil {
		t.Fatal(err)
	}
	c, err := wftoken.Verify([]byte("k"), tok, started)
	if err != nil {
		t.Fatal(err)
	}
	if c.JobID != job.ID || c.ClaimToken != job.ClaimToken || c.Workspace != "acme" || !c.Expiry.Equal(started.Add(13*time.Second)) {
		t.Fatalf("claims %+v", c)
	}
	if _, err := wftoken.Verify([]byte("k"), tok, started.Add(13*time.Second)); err == nil {
		t.Fatal("token still valid after claim + timeout + grace")
	}
}

func TestNewRefusesMissingSecret(t *testing.T) {
	t.Parallel()
	cache, _ := objectcache.NewFileCache(t.TempDir())
	if _, err := New(Config{Store: &memLogs{}, Cache: cache, Dir: t.TempDir()}); err == nil {
		t.Fatal("New accepted an empty secret")
	}
}
