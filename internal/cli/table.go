package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// table writes aligned columns for people; --json is for scripts.
type table struct {
	tw *tabwriter.Writer
}

// newTable starts a table with a header row.
func newTable(w io.Writer, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(headers...)
	return t
}

// row adds one row; tabs and newlines in a cell would break the columns,
// so they become spaces, and an empty cell shows as "-".
func (t *table) row(cells ...string) {
	for i, c := range cells {
		c = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(c)
		if c == "" {
			c = "-"
		}
		cells[i] = c
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// flush writes the aligned table.
func (t *table) flush() error {
	return t.tw.Flush()
}

// keyValues writes "key:  value" lines aligned, for one object.
func keyValues(w io.Writer, pairs ...string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		fmt.Fprintf(tw, "%s:\t%s\n", pairs[i], pairs[i+1])
	}
	return tw.Flush()
}

// fmtTime shows an API time in local time to the second; nil or zero is "".
func fmtTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// fmtDuration shows how long from start to end (or until now while
// running), rounded for reading.
func fmtDuration(start, end *time.Time) string {
	if start == nil || start.IsZero() {
		return ""
	}
	stop := time.Now()
	if end != nil && !end.IsZero() {
		stop = *end
	}
	d := stop.Sub(*start)
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// shortSHA is the first 10 characters of a commit.
func shortSHA(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}
