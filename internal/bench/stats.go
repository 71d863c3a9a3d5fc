package bench

import (
	"bufio"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// percentile returns the p-th percentile (0..100) of ds in milliseconds,
// by the nearest-rank method; 0 for no samples.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(p/100*float64(len(s)) + 0.999999)
	rank = min(max(rank, 1), len(s))
	return ms(s[rank-1])
}

// ms is d in milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// procStatusMiB reads a size field (VmHWM, VmRSS) of /proc/self/status in
// MiB; 0 where /proc is not there.
func procStatusMiB(field string) float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0
		}
		return round1(kb / 1024)
	}
	return 0
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
