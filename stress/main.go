package stress

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Exit codes of Main.
const (
	ExitOK          = 0   // the run finished within -max-errors
	ExitFailed      = 1   // more errors than -max-errors, or the run could not start
	ExitUsage       = 2   // the command line is wrong
	ExitInterrupted = 130 // stopped by Ctrl-C (after printing the summary)
)

// Usage is the help text.
const Usage = `usage:
  cqlstress COMMAND [n=COUNT | duration=TIME] [warmup=COUNT|TIME] [cl=LEVEL] [ratio(...)|ops(...)] [profile=FILE] [OPTIONS]
  cqlstress chart -o OUT.html|OUT.svg RESULT.json...

commands: write, update (one column of a row), read, mixed ratio(write=1,read=3), counter_write, counter_read,
          cas (on keyspace1.cas1: INSERT ... IF NOT EXISTS, then UPDATE ... IF "C0" = ?; cl= is the commit level),
          serial_read (SELECT from keyspace1.cas1 at -serial-cl; -populate writes its rows),
          user profile=FILE.yaml ops(insert=1,QUERY=2)
options:
  -rate threads=N | 'threads>=1' 'threads<=256' (sweep, doubling) | fixed=5000/s threads=N (open loop)
        | throttle=5000/s threads=N (paced, latency from the actual start)
  -pop seq=1..N | dist=uniform(1..N) | dist=gaussian(1..N) | dist=zipf(1..N,1.1) | dist=exp(1..N)
  -col size=fixed(34) | size=uniform(10..100)
  -schema 'replication(factor=1)' keyspace=keyspace1
  -mode prepared|simple protocolVersion=4 compression=lz4|snappy connections=2 pageSize=5000 prepareBatch=on|off
        timeout=12s coalesce=200us user=U password=P
        lean: cqld's own client instead of gocql, one connection per thread with one request in flight
              (write, update, read, counter_*; protocolVersion=4|5; no compression, auth, retries, cas or serial_read)
  -node 127.0.0.1[:9042],... [datacenter=DC]   -cl ONE   -serial-cl SERIAL
  -errors retries=N               let the driver retry N times (default 0: every failure counts)
  -populate [n=N]                 write the population's keys once before measuring
  -log interval=1s                -hdrfile FILE.hdr   -json FILE.json   -chart FILE.html|FILE.svg
  -title TEXT  -max-errors N (default 0)  -seed N
exit status: 0 ok, 1 more errors than -max-errors (or no run), 2 usage, 130 interrupted
`

// Main runs cqlstress with args (without the program name) and returns the
// exit status. Cancelling ctx stops a run with its summary.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, Usage)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if args[0] == "chart" {
		return chartMain(args[1:], stderr)
	}
	c, err := Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "cqlstress: %v\n\n%s", err, Usage)
		return ExitUsage
	}
	res, err := Run(ctx, c, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "cqlstress: %v\n", err)
		if errors.Is(err, ErrUsage) {
			return ExitUsage
		}
		return ExitFailed
	}
	switch {
	case res.Errors() > res.MaxErrors:
		fmt.Fprintf(stderr, "cqlstress: %d errors, more than -max-errors %d\n", res.Errors(), res.MaxErrors)
		return ExitFailed
	case !res.OK():
		return ExitInterrupted
	}
	return ExitOK
}

func chartMain(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("chart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "cqlstress.html", "output file: .html or .svg")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, "cqlstress chart: give one or more result files written with -json\n")
		return ExitUsage
	}
	var rs []*Result
	for _, f := range fs.Args() {
		r, err := ReadResult(f)
		if err != nil {
			fmt.Fprintf(stderr, "cqlstress chart: %v\n", err)
			return ExitFailed
		}
		if r.Title == "" {
			r.Title = strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		}
		rs = append(rs, r)
	}
	if err := WriteChart(*out, rs); err != nil {
		fmt.Fprintf(stderr, "cqlstress chart: %v\n", err)
		return ExitFailed
	}
	return ExitOK
}
