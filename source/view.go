package source

import (
	"time"

	"github.com/windforce/windforce/catalog"
)

// View is a source as the API shows it (GET /api/w/{ws}/sources, DESIGN
// §4) and as its events carry it (the data of source.synced and
// source.sync_failed, DESIGN §9): one shape for both, so a receiver reads
// an event's source as it would read the API's.
type View struct {
	ID       string     `json:"id"`
	URL      string     `json:"url"`
	Branch   string     `json:"branch"`
	Commit   string     `json:"commit"`
	SyncedAt *time.Time `json:"synced_at"`
	Error    string     `json:"error"`
	// HookSecretSet says whether git hosts can call the source's push hook
	// with a signature; the secret itself is never shown.
	HookSecretSet bool `json:"hook_secret_set"`
}

// ViewOf shows src with any credentials in its URL or error redacted:
// rows stored before such URLs were refused must not show them to every
// reader (nor to every event sink).
func ViewOf(src catalog.Source) View {
	return View{ID: src.ID, URL: Redact(src.URL), Branch: src.Branch, Commit: src.Commit,
		SyncedAt: src.SyncedAt, Error: RedactText(src.Error), HookSecretSet: src.HookSecret != ""}
}
