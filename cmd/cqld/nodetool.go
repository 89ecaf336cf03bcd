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
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/cqld/cqld/server"
)

// runNodetool is `cqld nodetool [-h HOST] [-p PORT] status`: the ring as
// node HOST sees it, printed as Cassandra's nodetool status prints it. It
// asks the node's metrics endpoint (prometheus_port), where Cassandra's
// nodetool asks JMX.
func runNodetool(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cqld nodetool", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("h", "127.0.0.1", "the node to ask (its prometheus_address)")
	port := fs.Int("p", 9180, "its prometheus_port")
	user := fs.String("u", "", "role to log in as, for commands that change state under PasswordAuthenticator")
	password := fs.String("pw", "", "its password")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() != 1 || (fs.Arg(0) != "status" && fs.Arg(0) != "reloadssl") {
		fmt.Fprintln(stderr, "usage: cqld nodetool [-h HOST] [-p PORT] [-u USER -pw PASSWORD] status|reloadssl")
		return 2
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	method := http.MethodGet
	if fs.Arg(0) == "reloadssl" {
		method = http.MethodPost
	}
	url := "http://" + net.JoinHostPort(*host, strconv.Itoa(*port)) + "/nodetool/" + fs.Arg(0)
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		fmt.Fprintln(stderr, "cqld nodetool:", err)
		return 1
	}
	if *user != "" {
		req.SetBasicAuth(*user, *password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(stderr, "cqld nodetool:", err)
		return 1
	}
	defer resp.Body.Close()
	if fs.Arg(0) == "reloadssl" {
		var res server.ReloadSSLResult
		if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&res); err != nil {
			fmt.Fprintf(stderr, "cqld nodetool: %s answered %s\n", url, resp.Status)
			return 1
		}
		for _, k := range []string{"client_encryption_options", "server_encryption_options"} {
			fmt.Fprintf(stdout, "%s: %s\n", k, res[k])
		}
		if resp.StatusCode != http.StatusOK {
			return 1
		}
		return 0
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "cqld nodetool: %s answered %s\n", url, resp.Status)
		return 1
	}
	var nodes []server.NodeStatus
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&nodes); err != nil {
		fmt.Fprintln(stderr, "cqld nodetool:", err)
		return 1
	}
	printStatus(stdout, nodes)
	return 0
}

// printStatus prints nodes by data center, as nodetool status does.
func printStatus(w io.Writer, nodes []server.NodeStatus) {
	byDC := map[string][]server.NodeStatus{}
	var dcs []string
	for _, n := range nodes {
		if _, ok := byDC[n.DataCenter]; !ok {
			dcs = append(dcs, n.DataCenter)
		}
		byDC[n.DataCenter] = append(byDC[n.DataCenter], n)
	}
	sort.Strings(dcs)
	for _, dc := range dcs {
		title := "Datacenter: " + dc
		fmt.Fprintf(w, "%s\n%s\n", title, repeat('=', len(title)))
		fmt.Fprintln(w, "Status=Up/Down")
		fmt.Fprintln(w, "|/ State=Normal/Leaving/Joining/Moving")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "--\tAddress\tLoad\tTokens\tOwns\tHost ID\tRack")
		ns := byDC[dc]
		sort.Slice(ns, func(i, j int) bool { return ns[i].Address < ns[j].Address })
		for _, n := range ns {
			st := "D"
			if n.Up {
				st = "U"
			}
			fmt.Fprintf(tw, "%s%s\t%s\t%s\t%d\t%.1f%%\t%s\t%s\n", st, n.State[:1], n.Address, bytesString(n.LoadBytes), n.Tokens, 100*n.Owns, n.HostID, n.Rack)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
}

func repeat(c byte, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return string(b)
}

// bytesString is a size as nodetool prints loads: 1.5 MiB.
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
