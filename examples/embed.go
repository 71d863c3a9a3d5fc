// Package examples bundles the example apps into the binary, so
// `windforce dev` can create a git source from them on first start.
package examples

import (
	"embed"
	"io/fs"
)

//go:embed hello
var files embed.FS

// Hello is the bundled examples/hello app: its files at the root.
func Hello() fs.FS {
	sub, err := fs.Sub(files, "hello")
	if err != nil {
		panic(err) // the directory is embedded at build time
	}
	return sub
}
