package bytesize

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"1MiB": 1 << 20, "2048": 2048, "64KiB": 64 << 10, "1GB": 1e9, "256MB": 256e6,
		"512MiB": 512 << 20, "1GiB": 1 << 30, " 3 KB ": 3000, "10B": 10,
		"8589934591GiB": 8589934591 << 30,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "lots", "0", "-1MiB", "1.5GiB", "MiB", "1TiB", "8589934592GiB",
		"9223372036854775808"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{
		512 << 20: "512MiB", 1 << 30: "1GiB", 1536 << 10: "1536KiB", 1000: "1000B", 0: "0B",
		math.MaxInt64: "9223372036854775807B",
	} {
		if got := Format(in); got != want {
			t.Errorf("Format(%d) = %q, want %q", in, got, want)
		}
		if in > 0 {
			if back, err := Parse(Format(in)); err != nil || back != in {
				t.Errorf("Parse(Format(%d)) = %d, %v", in, back, err)
			}
		}
	}
}
