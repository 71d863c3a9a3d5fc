package main

import "strings"

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
