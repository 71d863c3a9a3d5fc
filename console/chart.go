package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/windforce/windforce/spine"
)

// chart is the completions-per-minute chart: an inline SVG of stacked
// bars (success, failure, canceled) drawn by the server, and the totals
// the page also prints as text so the figures never depend on colour.
type chart struct {
	SVG      template.HTML
	Since    time.Time
	Success  int64
	Failure  int64
	Canceled int64
	Peak     int64
}

// Total is every completion in the window.
func (c chart) Total() int64 { return c.Success + c.Failure + c.Canceled }

// chart geometry, in SVG user units; the SVG scales to its box.
const (
	chartW, chartH = 600, 160
	chartPad       = 24
	barGap         = 2
)

// buildChart draws counts (60 one-minute buckets per status from since).
// The SVG holds only numbers and fixed text, so it is safe as HTML.
func buildChart(since time.Time, counts map[spine.Status][]int64) chart {
	ch := chart{Since: since}
	order := []spine.Status{spine.StatusSuccess, spine.StatusFailure, spine.StatusCanceled}
	for i := range 60 {
		var sum int64
		for _, s := range order {
			sum += counts[s][i]
		}
		ch.Peak = max(ch.Peak, sum)
		ch.Success += counts[spine.StatusSuccess][i]
		ch.Failure += counts[spine.StatusFailure][i]
		ch.Canceled += counts[spine.StatusCanceled][i]
	}
	scale := float64(chartH-2*chartPad) / float64(max(ch.Peak, 1))
	barW := float64(chartW-2*chartPad)/60 - barGap
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" role="img" aria-label="Completions per minute over the last hour: %d success, %d failure, %d canceled; peak %d per minute">`,
		chartW, chartH, ch.Success, ch.Failure, ch.Canceled, ch.Peak)
	base := float64(chartH - chartPad)
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" class="axis"/>`, chartPad, base, chartW-chartPad, base)
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="label">%d/min</text>`, 2, chartPad-8, ch.Peak)
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="label">−60 min</text>`, chartPad, chartH-6)
	fmt.Fprintf(&b, `<text x="%d" y="%d" class="label" text-anchor="end">now</text>`, chartW-chartPad, chartH-6)
	for i := range 60 {
		x := float64(chartPad) + float64(i)*(barW+barGap)
		y := base
		for _, s := range order {
			n := counts[s][i]
			if n == 0 {
				continue
			}
			h := float64(n) * scale
			y -= h
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" class="bar-%s"><title>%s %s: %d</title></rect>`,
				x, y, barW, h, s, since.Add(time.Duration(i)*time.Minute).UTC().Format("15:04"), s, n)
		}
	}
	b.WriteString(`</svg>`)
	ch.SVG = template.HTML(b.String()) //nolint:gosec // numbers, statuses and fixed text only
	return ch
}
