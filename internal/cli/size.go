package cli

import "github.com/windforce/windforce/internal/bytesize"

// parseSize reads a byte size flag or variable (1048576, 64KiB, 1MiB, 1GB)
// with the parser the manifest's limits.memory uses too.
func parseSize(s string) (int64, error) { return bytesize.Parse(s) }

// size is a byte size setting. As a flag.Value it is checked when the
// flag or its variable is read, so a bad WINDFORCE_MAX_LOG_BYTES is a
// usage error naming the variable before anything starts.
type size int64

// Set reads a size as parseSize does.
func (s *size) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = size(n)
	return nil
}

// String writes the size the way it is usually written (1MiB).
func (s *size) String() string { return bytesize.Format(int64(*s)) }
