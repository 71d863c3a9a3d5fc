package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
)

// splitComma splits a comma-separated list, dropping empty items.
func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// sqliteSuffix gives each system its own SQLite file; a Postgres URL is
// returned as it is (each system makes its own schema).
func sqliteSuffix(url, suffix string) string {
	if strings.HasPrefix(url, "sqlite://") {
		return url + suffix
	}
	return url
}

// startCPUProfile writes a CPU profile to path until the returned stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
