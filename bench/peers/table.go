//go:build linux

package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// sharedAbove is the others' cores past which the run says the machine
// was shared.
const sharedAbove = 0.15

type cellKey struct {
	server, client string
	clients        int
}

// column is one column of a table: a server and the client driving it.
type column struct {
	title          string
	server, client string
}

// printReport prints the header, the raw cells and the tables drawn from
// them.
func printReport(w io.Writer, header []string, cells []cell, r *runner) {
	byKey := map[cellKey]cell{}
	for _, c := range cells {
		byKey[cellKey{c.Server, c.Client, c.Clients}] = c
	}
	get := func(col column, n int) (cell, bool) {
		c, ok := byKey[cellKey{col.server, col.client, n}]
		return c, ok
	}
	redis := column{"Redis always", "Redis always", "redis-benchmark"}
	redisLean := column{"Redis always, lean", "Redis always", "lean"}
	var floors []column
	if r.floor {
		for _, arch := range floorArchs {
			floors = append(floors, column{floorName(arch) + ", lean", floorName(arch), "lean"})
		}
	}
	var cqld []column
	for _, m := range r.modes {
		for _, cl := range []string{"lean", "gocql"} {
			cqld = append(cqld, column{m + " " + cl, "cqld " + m, cl})
		}
	}

	for _, h := range header {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintln(w, sharedNote(cells))

	fmt.Fprintln(w, "\nCells (latencies in ms, CPU in us per operation, the server's with the part it spent in the kernel;")
	fmt.Fprintln(w, "others: cores the rest of the machine used meanwhile;")
	fmt.Fprintln(w, "cqld's commit log meanwhile: syncs per second, appends per sync, and its fdatasync's mean, p50 and p90 in us,")
	fmt.Fprintln(w, "the quantiles interpolated in buckets a factor of 1.41 apart):")
	fmt.Fprintln(w)
	row(w, "server", "client", "clients", "ops/s", "p50", "p99", "max", "client CPU", "server CPU", "of it kernel", "others",
		"syncs/s", "appends/sync", "fsync mean, p50, p90")
	rule(w, 14)
	for _, c := range cells {
		syncs, per, fsync := "", "", ""
		if sp := c.Sync; sp != nil {
			syncs, per = commas(sp.PerSecond), fmt.Sprintf("%.1f", sp.PerSync)
			fsync = fmt.Sprintf("%.0f, %.0f, %.0f", sp.Mean, sp.P50, sp.P90)
		}
		row(w, c.Server, c.Client, fmt.Sprint(c.Clients), commas(c.Rate), ms(c.P50), ms(c.P99), ms(c.Max),
			fmt.Sprintf("%.1f", c.ClientCPU), fmt.Sprintf("%.1f", c.ServerCPU), fmt.Sprintf("%.1f", c.ServerSys), fmt.Sprintf("%.2f", c.Others),
			syncs, per, fsync)
	}

	fmt.Fprintln(w, "\nops/s, p50 ms and, for the Go floor and cqld, ops/s as a multiple of Redis's under redis-benchmark; cqld's columns are its commitlog_sync mode and the client:")
	fmt.Fprintln(w)
	titles := []string{"clients", redis.title, redisLean.title}
	for _, col := range floors {
		titles = append(titles, col.title)
	}
	for _, col := range cqld {
		titles = append(titles, col.title)
	}
	row(w, titles...)
	rule(w, len(titles))
	for _, n := range r.clients {
		base, baseOK := get(redis, n)
		lean, leanOK := get(redisLean, n)
		vals := []string{fmt.Sprint(n),
			ifOK(baseOK, func() string { return fmt.Sprintf("%s, %s", commas(base.Rate), ms(base.P50)) }),
			ifOK(leanOK, func() string { return fmt.Sprintf("%s, %s", commas(lean.Rate), ms(lean.P50)) })}
		for _, col := range slices.Concat(floors, cqld) {
			c, ok := get(col, n)
			vals = append(vals, ifOK(ok, func() string {
				if !baseOK || base.Rate == 0 {
					return fmt.Sprintf("%s, %s", commas(c.Rate), ms(c.P50))
				}
				return fmt.Sprintf("%s, %s, %.2fx", commas(c.Rate), ms(c.P50), c.Rate/base.Rate)
			}))
		}
		row(w, vals...)
	}

	type ratio struct {
		title    string
		num, den column
	}
	var ratios []ratio
	for _, col := range floors {
		ratios = append(ratios, ratio{col.server + " / Redis, both lean", col, redisLean})
	}
	for _, m := range r.modes {
		if m != "periodic" {
			ratios = append(ratios, ratio{fmt.Sprintf("%s / Redis, both lean", m),
				column{"", "cqld " + m, "lean"}, redisLean})
		}
	}
	for _, cl := range []string{"lean", "gocql"} {
		for _, den := range []string{"batch", "periodic"} {
			if has(r.modes, "adaptive") && has(r.modes, den) {
				ratios = append(ratios, ratio{fmt.Sprintf("adaptive / %s, %s", den, cl),
					column{"", "cqld adaptive", cl}, column{"", "cqld " + den, cl}})
			}
		}
	}
	if len(ratios) == 0 {
		return
	}
	fmt.Fprintln(w, "\nThe Go floor (a durable Go server with no database work, peers go-floor) and cqld's durable modes against Redis with the same kind of client (Go, a goroutine and a connection per client, one request in flight), and the default mode against the others with the same client;")
	fmt.Fprintln(w, "where both cells synced, the ratio of their mean fdatasync follows in brackets (the disk's share of a ratio that flaps):")
	fmt.Fprintln(w)
	titles = []string{"clients"}
	for _, q := range ratios {
		titles = append(titles, q.title)
	}
	row(w, titles...)
	rule(w, len(titles))
	for _, n := range r.clients {
		vals := []string{fmt.Sprint(n)}
		for _, q := range ratios {
			a, ok1 := get(q.num, n)
			b, ok2 := get(q.den, n)
			vals = append(vals, ifOK(ok1 && ok2 && b.Rate > 0, func() string { return rateRatio(a, b) }))
		}
		row(w, vals...)
	}
}

// rateRatio is a's rate over b's and, when both synced, the ratio of their
// mean fdatasync: a cell whose disk was slower than its peer's loses by it,
// whatever the commit log did.
func rateRatio(a, b cell) string {
	s := fmt.Sprintf("%.2f", a.Rate/b.Rate)
	if a.Sync != nil && b.Sync != nil && a.Sync.Mean > 0 && b.Sync.Mean > 0 {
		s += fmt.Sprintf(" (fsync %.2f)", a.Sync.Mean/b.Sync.Mean)
	}
	return s
}

// sharedNote says whether other processes used the machine while the
// cells ran.
func sharedNote(cells []cell) string {
	var most, sum float64
	for _, c := range cells {
		most = max(most, c.Others)
		sum += c.Others
	}
	mean := 0.0
	if len(cells) > 0 {
		mean = sum / float64(len(cells))
	}
	if most > sharedAbove {
		return fmt.Sprintf("The machine was shared: other processes used %.2f cores on average while the cells ran, %.2f at most (see the others column).", mean, most)
	}
	return fmt.Sprintf("The machine was otherwise idle: other processes used at most %.2f cores while the cells ran.", most)
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func ifOK(ok bool, f func() string) string {
	if !ok {
		return "-"
	}
	return f()
}

func row(w io.Writer, cols ...string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cols, " | "))
}

func rule(w io.Writer, n int) {
	fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", n))
}

func ms(v float64) string { return fmt.Sprintf("%.3f", v) }

// commas formats v, rounded, with thousands separators.
func commas(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
