package cli

import (
	"github.com/windforce/windforce/runner"
	"github.com/windforce/windforce/server"
	"github.com/windforce/windforce/spine"
	"github.com/windforce/windforce/store"
)

// workerStore is what a worker runs on: the queue spine, the secrets its
// runner opens at claim (runner.SecretStore) and the apps' commits its
// warm pool compares its processes with (runner.CatalogReader).
type workerStore interface {
	spine.Store
	runner.SecretStore
	runner.CatalogReader
}

// apiStore is the store of a server process: the API's, and a worker's
// for dev, which runs one in the same process.
type apiStore interface {
	server.Store
	runner.SecretStore
}

// Checked when the program compiles, never at run time.
var (
	_ workerStore = (*store.Store)(nil)
	_ apiStore    = (*store.Store)(nil)
)
