package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cqld/cqld/server"
)

// runNodetool is `cqld nodetool [-h HOST] [-p PORT] [-u USER -pw PASSWORD]
// COMMAND`, Cassandra's nodetool over the node's metrics endpoint
// (prometheus_port), where Cassandra's asks JMX:
//
//	status [keyspace]           the ring as node HOST sees it
//	netstats                    the node's mode and its streaming
//	decommission [-f|--force]   the node leaves the ring, streaming its data away
//	removenode <host id>        a dead node is removed, its data re-replicated
//	removenode status           the removal running on HOST, if any
//
// The commands that change the topology are POSTs that wait until the
// change is done; under PasswordAuthenticator they need a superuser's -u
// and -pw.
func runNodetool(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cqld nodetool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("h", "127.0.0.1", "the node to ask (its prometheus_address)")
	port := fs.Int("p", 9180, "its prometheus_port")
	user := fs.String("u", "", "role to log in as, for commands that change state under PasswordAuthenticator (a superuser for decommission and removenode)")
	password := fs.String("pw", "", "its password")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	t := &nodetool{base: "http://" + net.JoinHostPort(*host, strconv.Itoa(*port)), user: *user, password: *password, stdout: stdout, stderr: stderr}
	cmd := fs.Args()
	if len(cmd) == 0 {
		return t.usage()
	}
	switch rest := cmd[1:]; cmd[0] {
	case "status":
		if len(rest) > 1 {
			return t.usage()
		}
		path := "/nodetool/status"
		if len(rest) == 1 {
			path += "?" + url.Values{"keyspace": rest}.Encode()
		}
		var st server.Status
		if code := t.get(ctx, path, &st); code != 0 {
			return code
		}
		printStatus(stdout, st)
		return 0
	case "netstats":
		var ns server.Netstats
		if code := t.get(ctx, "/nodetool/netstats", &ns); code != 0 {
			return code
		}
		printNetstats(stdout, ns)
		return 0
	case "decommission":
		force := false
		for _, a := range rest {
			switch a {
			case "-f", "--force":
				force = true
			default:
				return t.usage()
			}
		}
		form := url.Values{}
		if force {
			form.Set("force", "true")
		}
		return t.post(ctx, "/nodetool/decommission", form)
	case "reloadssl":
		if len(rest) != 0 {
			return t.usage()
		}
		return t.reloadSSL(ctx)
	case "removenode":
		if len(rest) != 1 {
			return t.usage()
		}
		switch rest[0] {
		case "status":
			var ns server.Netstats
			if code := t.get(ctx, "/nodetool/netstats", &ns); code != 0 {
				return code
			}
			p := ns.Progress
			if !p.Running || !strings.HasPrefix(p.Operation, "removenode ") {
				fmt.Fprintln(stdout, "RemovalStatus: No removals in process.")
			} else {
				fmt.Fprintf(stdout, "RemovalStatus: Removing host %s: %d of %d streams done.\n", strings.TrimPrefix(p.Operation, "removenode "), p.Done, p.Streams)
			}
			return 0
		case "force":
			fmt.Fprintln(stderr, "nodetool: removenode force is not supported by cqld: run removenode <host id> again to continue a removal")
			return 1
		}
		return t.post(ctx, "/nodetool/removenode", url.Values{"host_id": {rest[0]}})
	}
	return t.usage()
}

// nodetool talks to one node's admin endpoint.
type nodetool struct {
	base, user, password string
	stdout, stderr       io.Writer
}

func (t *nodetool) usage() int {
	fmt.Fprintln(t.stderr, "usage: cqld nodetool [-h HOST] [-p PORT] [-u USER -pw PASSWORD] "+
		"status [keyspace] | netstats | reloadssl | decommission [--force] | removenode <host id> | removenode status")
	return 2
}

// do sends method path to the node, form (when not nil) as its body, and
// returns the answer, or nil once it printed why there is none. A POST
// changes state and carries the credentials.
func (t *nodetool) do(ctx context.Context, method, path string, form url.Values) *http.Response {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, t.base+path, body)
	if err != nil {
		fmt.Fprintln(t.stderr, "cqld nodetool:", err)
		return nil
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if method == http.MethodPost && t.user != "" {
		req.SetBasicAuth(t.user, t.password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(t.stderr, "cqld nodetool:", err)
		return nil
	}
	return resp
}

// get reads path's JSON into v, within 10 s.
func (t *nodetool) get(ctx context.Context, path string, v any) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp := t.do(ctx, http.MethodGet, path, nil)
	if resp == nil {
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var ae server.AdminError
		if resp.StatusCode == http.StatusBadRequest && json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ae) == nil && ae.Message != "" {
			// As nodetool prints an IllegalArgumentException of a read.
			fmt.Fprintf(t.stdout, "\nError: %s\n", ae.Message)
			return 1
		}
		fmt.Fprintf(t.stderr, "cqld nodetool: %s answered %s\n", t.base+path, resp.Status)
		return 1
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v); err != nil {
		fmt.Fprintln(t.stderr, "cqld nodetool:", err)
		return 1
	}
	return 0
}

// post runs a topology change and waits, as long as it takes, for its
// outcome, printed as Cassandra's nodetool prints a refusal.
func (t *nodetool) post(ctx context.Context, path string, form url.Values) int {
	resp := t.do(ctx, http.MethodPost, path, form)
	if resp == nil {
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return 0
	}
	var ae server.AdminError
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&ae); err != nil {
		fmt.Fprintf(t.stderr, "cqld nodetool: %s answered %s\n", t.base+path, resp.Status)
		return 1
	}
	switch ae.Class {
	case "UnsupportedOperationException":
		fmt.Fprintln(t.stderr, "nodetool: Unsupported operation: "+ae.Message)
		return 1
	case "IllegalStateException", "IllegalArgumentException", "SecurityException":
		fmt.Fprintln(t.stderr, "nodetool: "+ae.Message)
		return 1
	}
	fmt.Fprintln(t.stderr, "error: "+ae.Message)
	return 2
}

// reloadSSL asks the node to reread its certificate files now and prints
// what became of each set of encryption options.
func (t *nodetool) reloadSSL(ctx context.Context) int {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp := t.do(ctx, http.MethodPost, "/nodetool/reloadssl", nil)
	if resp == nil {
		return 1
	}
	defer resp.Body.Close()
	var res server.ReloadSSLResult
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&res); err != nil {
		fmt.Fprintf(t.stderr, "cqld nodetool: %s answered %s\n", t.base+"/nodetool/reloadssl", resp.Status)
		return 1
	}
	for _, k := range []string{"client_encryption_options", "server_encryption_options"} {
		fmt.Fprintf(t.stdout, "%s: %s\n", k, res[k])
	}
	if resp.StatusCode != http.StatusOK {
		return 1
	}
	return 0
}

// printNetstats prints the node's mode and its streaming, as nodetool
// netstats begins.
func printNetstats(w io.Writer, ns server.Netstats) {
	fmt.Fprintf(w, "Mode: %s\n", ns.Mode)
	p := ns.Progress
	if p.Operation == "" {
		fmt.Fprintln(w, "Not sending any streams.")
		return
	}
	state := "running"
	switch {
	case p.Running:
	case p.Error != "":
		state = "failed: " + p.Error
	default:
		state = "done"
	}
	fmt.Fprintf(w, "%s (%s): %d of %d streams done, %d partitions, %s streamed\n", p.Operation, state, p.Done, p.Streams, p.Partitions, bytesString(uint64(p.Bytes)))
}

// printStatus prints the ring as nodetool status does (Cassandra 4.0's
// Status with its TableBuilder): a block per data center, their columns as
// wide as the widest cell of any of them (the last one too) and two spaces
// apart; the ownership as "Owns (effective)" or, when no effective figure
// is meaningful, "?" under "Owns" and the reason as a note at the end.
func printStatus(w io.Writer, st server.Status) {
	byDC := map[string][]server.NodeStatus{}
	var dcs []string
	for _, n := range st.Nodes {
		if _, ok := byDC[n.DataCenter]; !ok {
			dcs = append(dcs, n.DataCenter)
		}
		byDC[n.DataCenter] = append(byDC[n.DataCenter], n)
	}
	sort.Strings(dcs)
	owns := "Owns"
	if st.Effective {
		owns = "Owns (effective)"
	}
	header := []string{"--", "Address", "Load", "Tokens", owns, "Host ID", "Rack"}
	tables := make([][][]string, len(dcs))
	widths := make([]int, len(header))
	for i, dc := range dcs {
		rows := [][]string{header}
		ns := byDC[dc]
		sort.Slice(ns, func(i, j int) bool { return ns[i].Address < ns[j].Address })
		for _, n := range ns {
			st0 := "D"
			if n.Up {
				st0 = "U"
			}
			o := "?"
			if st.Effective {
				o = fmt.Sprintf("%.1f%%", 100*n.Owns)
			}
			rows = append(rows, []string{st0 + n.State[:1], n.Address, loadString(n.LoadBytes), strconv.Itoa(n.Tokens), o, n.HostID, n.Rack})
		}
		for _, r := range rows {
			for c, cell := range r {
				widths[c] = max(widths[c], len(cell))
			}
		}
		tables[i] = rows
	}
	for i, dc := range dcs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		title := "Datacenter: " + dc
		fmt.Fprintf(w, "%s\n%s\n", title, repeat('=', len(title)))
		fmt.Fprintln(w, "Status=Up/Down")
		fmt.Fprintln(w, "|/ State=Normal/Leaving/Joining/Moving")
		for _, r := range tables[i] {
			for c, cell := range r {
				if c > 0 {
					io.WriteString(w, "  ")
				}
				fmt.Fprintf(w, "%-*s", widths[c], cell)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	if st.Note != "" {
		fmt.Fprintf(w, "Note: %s\n", st.Note)
	}
}

func repeat(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// loadString is a size as nodetool status prints a load
// (FileUtils.stringifyFileSize): at most two decimals, none trailing, so
// 1.5 MiB, 70.13 KiB, 512 bytes.
func loadString(n uint64) string {
	const unit = 1024
	v, i := float64(n), 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	f := strings.TrimRight(strings.TrimRight(strconv.FormatFloat(v, 'f', 2, 64), "0"), ".")
	return f + " " + []string{"bytes", "KiB", "MiB", "GiB", "TiB"}[i]
}

// bytesString is a size with two decimals: 1.50 MiB.
func bytesString(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 3 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.2f %s", v, []string{"KiB", "MiB", "GiB", "TiB"}[i])
}
