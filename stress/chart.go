package stress

import (
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// WriteChart draws results into path: .svg is the picture alone, .html the
// picture and a table of the summaries. Both are self-contained (no script,
// no fetched resource). Each result is one series (one colour): a sweep
// draws throughput and p99 against threads; other runs draw throughput
// and latency percentiles over time.
func WriteChart(path string, results []*Result) error {
	if len(results) == 0 {
		return fmt.Errorf("stress: chart: no results")
	}
	var out string
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		out = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + chartSVG(results)
	case ".html", ".htm":
		out = chartHTML(results)
	default:
		return fmt.Errorf("stress: chart %s: write .svg or .html (PNG is not drawn)", path)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		return fmt.Errorf("stress: chart: %w", err)
	}
	return nil
}

// runLabel names a result in legends.
func runLabel(r *Result, i int) string {
	if r.Title != "" {
		return r.Title
	}
	return fmt.Sprintf("run %d: %s", i+1, strings.Join(r.Command, " "))
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

type series struct {
	name  string
	color string
	dash  string
	pts   [][2]float64
}

type tick struct {
	x     float64
	label string
}

type panel struct {
	title, xlabel, ylabel string
	log2X                 bool
	xticks                []tick // when set, the x axis's ticks (x values are used as they are)
	series                []series
	legend                []series // when set, shown instead of one entry per series
}

func chartPanels(results []*Result) []panel {
	sweep := true
	for _, r := range results {
		sweep = sweep && r.Sweep
	}
	if sweep {
		tp := panel{title: "Throughput against threads", xlabel: "threads", ylabel: "op/s", log2X: true}
		lat := panel{title: "p99 latency against threads", xlabel: "threads", ylabel: "ms", log2X: true}
		for i, r := range results {
			color := palette[i%len(palette)]
			a, b := series{name: runLabel(r, i), color: color}, series{name: runLabel(r, i) + " p99", color: color}
			for _, s := range r.Steps {
				a.pts = append(a.pts, [2]float64{float64(s.Threads), s.Total.OpRate})
				b.pts = append(b.pts, [2]float64{float64(s.Threads), s.Total.Latency.P99})
			}
			tp.series = append(tp.series, a)
			lat.series = append(lat.series, b)
		}
		return []panel{tp, lat}
	}
	tp := panel{title: "Throughput over time", xlabel: "seconds", ylabel: "op/s"}
	lat := panel{title: "Latency percentiles over time", xlabel: "seconds", ylabel: "ms"}
	pcts := []struct {
		name string
		dash string
		f    func(Summary) float64
	}{
		{"median", "2,3", func(s Summary) float64 { return s.Latency.Median }},
		{"p95", "8,4", func(s Summary) float64 { return s.Latency.P95 }},
		{"p99", "", func(s Summary) float64 { return s.Latency.P99 }},
		{"p99.9", "12,3,2,3", func(s Summary) float64 { return s.Latency.P999 }},
		{"svc p99", "1,2", func(s Summary) float64 {
			if s.ServiceTime == nil {
				return math.NaN()
			}
			return s.ServiceTime.P99
		}},
	}
	for i, r := range results {
		color := palette[i%len(palette)]
		label := runLabel(r, i)
		t := series{name: label, color: color}
		ls := make([]series, len(pcts))
		for j, p := range pcts {
			ls[j] = series{name: label + " " + p.name, color: color, dash: p.dash}
		}
		offset := 0.0
		for _, s := range r.Steps {
			for _, iv := range drawnIntervals(s.Intervals) {
				x := offset + iv.Time
				t.pts = append(t.pts, [2]float64{x, iv.OpRate})
				for j, p := range pcts {
					if v := p.f(iv.Summary); !math.IsNaN(v) && iv.Ops > 0 {
						ls[j].pts = append(ls[j].pts, [2]float64{x, v})
					}
				}
			}
			offset += s.Total.Seconds
		}
		tp.series = append(tp.series, t)
		lat.legend = append(lat.legend, series{name: label, color: color})
		for _, l := range ls {
			if len(l.pts) > 0 {
				lat.series = append(lat.series, l)
			}
		}
	}
	for _, p := range pcts {
		for _, s := range lat.series {
			if s.dash == p.dash {
				lat.legend = append(lat.legend, series{name: p.name, color: "#555", dash: p.dash})
				break
			}
		}
	}
	return []panel{tp, lat, spectrumPanel(results)}
}

// drawnIntervals leaves out a last interval much shorter than the others
// (the stub between the last tick and the end of the run), whose rate over
// a few milliseconds would draw as a cliff.
func drawnIntervals(ivs []Interval) []Interval {
	if n := len(ivs); n >= 2 && ivs[n-1].Seconds < ivs[0].Seconds/4 {
		return ivs[:n-1]
	}
	return ivs
}

// spectrumPanel draws each run's latency against percentile, the x axis
// stretched by nines (90%, 99%, 99.9%, ... equally spaced).
func spectrumPanel(results []*Result) panel {
	nines := func(p float64) float64 { return math.Log10(1 / (1 - math.Min(p, 99.999)/100)) }
	sp := panel{title: "Latency by percentile (whole run)", xlabel: "percentile", ylabel: "ms"}
	for i, l := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
		sp.xticks = append(sp.xticks, tick{float64(i), l})
	}
	sp.xticks = append(sp.xticks, tick{nines(50), "50%"})
	for i, r := range results {
		color := palette[i%len(palette)]
		for _, st := range r.Steps {
			for j, spec := range [][]Point{st.Spectrum, st.ServiceSpectrum} {
				s := series{name: runLabel(r, i), color: color}
				if j == 1 {
					s.name, s.dash = s.name+" service time", "1,2"
				}
				for _, p := range spec {
					if p.Percentile < 100 {
						s.pts = append(s.pts, [2]float64{nines(p.Percentile), p.Ms})
					}
				}
				if len(s.pts) > 0 {
					sp.series = append(sp.series, s)
				}
			}
		}
	}
	return sp
}

const (
	chartW      = 980
	panelH      = 380
	plotLeft    = 80
	plotRight   = 290 // room for the legend
	plotTop     = 40
	plotBottom  = 50
	legendWidth = 270
)

func chartSVG(results []*Result) string {
	panels := chartPanels(results)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartW, panelH*len(panels), chartW, panelH*len(panels))
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for i, p := range panels {
		drawPanel(&b, p, float64(i*panelH))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func drawPanel(b *strings.Builder, p panel, top float64) {
	x0, y0 := float64(plotLeft), top+plotTop
	w, h := float64(chartW-plotLeft-plotRight), float64(panelH-plotTop-plotBottom)
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, s := range p.series {
		for _, pt := range s.pts {
			xmin, xmax, ymax = math.Min(xmin, pt[0]), math.Max(xmax, pt[0]), math.Max(ymax, pt[1])
		}
	}
	if math.IsInf(xmin, 0) {
		xmin, xmax = 0, 1
	}
	if !p.log2X {
		xmin = 0
	}
	if xmax <= xmin {
		xmax = xmin + 1
	}
	yticks := niceTicks(ymax)
	ytop := yticks[len(yticks)-1]
	fx := func(x float64) float64 {
		if p.log2X {
			return x0 + w*(math.Log2(x)-math.Log2(xmin))/math.Max(math.Log2(xmax)-math.Log2(xmin), 1)
		}
		return x0 + w*(x-xmin)/(xmax-xmin)
	}
	fy := func(y float64) float64 { return y0 + h - h*y/ytop }
	fmt.Fprintf(b, `<text x="%g" y="%g" font-size="15" font-weight="bold">%s</text>`+"\n", x0, top+24, html.EscapeString(p.title))
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>`+"\n", x0, y0, w, h)
	for _, t := range yticks {
		y := fy(t)
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x0+w, y)
		fmt.Fprintf(b, `<text x="%g" y="%.1f" text-anchor="end">%s</text>`+"\n", x0-6, y+4, tickLabel(t))
	}
	xticks := p.xticks
	if xticks == nil && p.log2X {
		for t := math.Exp2(math.Floor(math.Log2(xmin))); t <= xmax*1.0001; t *= 2 {
			xticks = append(xticks, tick{t, tickLabel(t)})
		}
	} else if xticks == nil {
		for _, t := range niceTicks(xmax) {
			xticks = append(xticks, tick{t, tickLabel(t)})
		}
	}
	for _, t := range xticks {
		if t.x > xmax*1.0001 {
			continue
		}
		x := fx(t.x)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#eee"/>`+"\n", x, y0, x, y0+h)
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", x, y0+h+16, t.label)
	}
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", x0+w/2, y0+h+36, html.EscapeString(p.xlabel))
	fmt.Fprintf(b, `<text x="%g" y="%g" text-anchor="middle" transform="rotate(-90 %g %g)">%s</text>`+"\n",
		x0-56, y0+h/2, x0-56, y0+h/2, html.EscapeString(p.ylabel))
	for _, s := range p.series {
		var pts strings.Builder
		for _, pt := range s.pts {
			fmt.Fprintf(&pts, "%.1f,%.1f ", fx(pt[0]), fy(pt[1]))
		}
		dash := ""
		if s.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.dash)
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.8"%s points="%s"><title>%s</title></polyline>`+"\n",
			s.color, dash, strings.TrimSpace(pts.String()), html.EscapeString(s.name))
		if len(s.pts) == 1 || p.log2X {
			for _, pt := range s.pts {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", fx(pt[0]), fy(pt[1]), s.color)
			}
		}
	}
	legend := p.legend
	if legend == nil {
		legend = p.series
	}
	for i, s := range legend {
		dash := ""
		if s.dash != "" {
			dash = fmt.Sprintf(` stroke-dasharray="%s"`, s.dash)
		}
		ly := y0 + 8 + float64(i)*18
		lx := x0 + w + 16
		fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"%s/>`+"\n", lx, ly, lx+28, ly, s.color, dash)
		fmt.Fprintf(b, `<text x="%g" y="%g">%s</text>`+"\n", lx+34, ly+4, html.EscapeString(shorten(s.name, 38)))
	}
}

// niceTicks returns 0 and evenly spaced round values up to at least max.
func niceTicks(max float64) []float64 {
	if max <= 0 || math.IsNaN(max) {
		max = 1
	}
	raw := max / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var t []float64
	for v := 0.0; ; v += step {
		t = append(t, v)
		if v >= max {
			return t
		}
	}
}

func tickLabel(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", math.Round(v*1000)/1000)
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

func chartHTML(results []*Result) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>cqlstress</title>\n")
	b.WriteString("<style>body{font-family:sans-serif;margin:24px} table{border-collapse:collapse;margin-top:16px} td,th{border:1px solid #ccc;padding:3px 8px;text-align:right} th{background:#f4f4f4} td:first-child{text-align:left}</style>\n")
	b.WriteString("</head><body>\n<h1>cqlstress</h1>\n")
	b.WriteString(chartSVG(results))
	b.WriteString("<table>\n<tr><th>run</th><th>threads</th><th>op/s</th><th>pk/s</th><th>row/s</th><th>mean ms</th><th>median</th><th>p95</th><th>p99</th><th>p99.9</th><th>max</th><th>errors</th><th>seconds</th></tr>\n")
	for i, r := range results {
		for _, s := range r.Steps {
			t, l := s.Total, s.Total.Latency
			fmt.Fprintf(&b, "<tr><td><span style=\"color:%s\">&#9632;</span> %s</td><td>%d</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%d</td><td>%.1f</td></tr>\n",
				palette[i%len(palette)], html.EscapeString(runLabel(r, i)), s.Threads, t.OpRate, t.PartitionRate, t.RowRate,
				l.Mean, l.Median, l.P95, l.P99, l.P999, l.Max, t.Errors, t.Seconds)
		}
	}
	b.WriteString("</table>\n</body></html>\n")
	return b.String()
}
