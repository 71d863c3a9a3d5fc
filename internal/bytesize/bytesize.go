// Package bytesize reads and writes byte sizes as people write them in
// flags, environment variables and the manifest: 1048576, 64KiB, 512MiB,
// 1GiB, 256MB. One parser serves them all, so WINDFORCE_MAX_RESULT_BYTES
// and a manifest's limits.memory accept the same spellings.
package bytesize

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// units are the accepted suffixes, longest first among those that share
// an ending ("KiB" before "B").
var units = []struct {
	suffix string
	mult   int64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}

// Parse reads a positive byte size: a plain number of bytes or one with a
// KiB, MiB, GiB, KB, MB, GB or B suffix. Zero, negative, fractional and
// overflowing sizes are refused.
func Parse(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, like 1048576 or 1MiB", s)
	}
	return n * mult, nil
}

// Format writes n in the largest binary unit that divides it exactly
// (512MiB, 1GiB, 1536KiB), or as plain bytes ("1000B"), so a limit reads
// back the way it is usually written.
func Format(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
