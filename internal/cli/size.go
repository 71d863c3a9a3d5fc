package cli

import "github.com/windforce/windforce/internal/bytesize"

// parseSize reads a byte size flag or variable (1048576, 64KiB, 1MiB, 1GB)
// with the parser the manifest's limits.memory uses too.
func parseSize(s string) (int64, error) { return bytesize.Parse(s) }
