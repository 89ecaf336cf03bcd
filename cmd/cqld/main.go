// Command cqld runs a cqld node: a database server that speaks the Cassandra
// CQL native protocol.
//
//	cqld                       # 127.0.0.1:9042, data under ./data, metrics on 127.0.0.1:9180
//	cqld -config cqld.yaml     # cassandra.yaml key names
//	cqld -native_transport_port 9043 -data_file_directories /srv/cqld/data
//	cqld cluster -n 3          # three nodes on 127.0.0.1-3, files under ./cluster
//	cqld nodetool -h 127.0.0.2 status   # the ring as that node sees it
//	cqld nodetool -u cassandra -pw cassandra reloadssl   # reread the certificate files now
//	cqld nodetool -h 127.0.0.3 decommission
//	cqld nodetool removenode <host id>
//
// Every configuration key is also a flag of the same name; flags override
// the file. SIGINT or SIGTERM drain requests in flight and exit 0, as does
// a node once it has decommissioned.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "cluster":
			os.Exit(runCluster(ctx, os.Args[2:], os.Stdout, os.Stderr))
		case "nodetool":
			os.Exit(runNodetool(ctx, os.Args[2:], os.Stdout, os.Stderr))
		}
	}
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("cqld", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "YAML configuration file, with cassandra.yaml's key names")
	drain := fs.Duration("drain_timeout", 30*time.Second, "how long a stop waits for requests in flight")
	flags := config.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg, err := config.Load(*path)
	if err == nil {
		err = flags.Apply(&cfg)
	}
	if err == nil {
		err = cfg.ReadSnitchProperties(filepath.Dir(*path))
	}
	if err != nil {
		fmt.Fprintln(stderr, "cqld:", err)
		return 2
	}
	node, err := server.StartWith(cfg, log, server.Options{Context: ctx})
	if err != nil {
		fmt.Fprintln(stderr, "cqld:", err)
		return 1
	}
	select {
	case <-ctx.Done():
	case <-node.Decommissioned():
		log.Info("this node has decommissioned; stopping")
	}
	log.Info("stopping: draining requests in flight", "timeout", *drain)
	sctx, cancel := context.WithTimeout(context.Background(), *drain)
	defer cancel()
	if err := node.Shutdown(sctx); err != nil {
		fmt.Fprintln(stderr, "cqld:", err)
		return 1
	}
	return 0
}
