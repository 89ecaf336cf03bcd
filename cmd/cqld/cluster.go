package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cqld/cqld/config"
)

// runCluster is `cqld cluster -n N`: a local cluster of N cqld processes on
// 127.0.0.1 to 127.0.0.N, as ccm starts Cassandra nodes. Each node gets a
// cassandra.yaml-style file and its data under dir/nodeI, the same ports as
// the others (nodes differ by address), and the first node as seed. It
// starts them one after another, each once the one before serves clients,
// and stops them all on SIGINT or SIGTERM.
func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cqld cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 3, "number of nodes, 1 to 9, on 127.0.0.1 to 127.0.0.N")
	dir := fs.String("dir", filepath.Join("data", "cluster"), "directory holding one nodeI directory per node")
	native := fs.Int("native_transport_port", 9042, "CQL port of every node")
	storage := fs.Int("storage_port", 7000, "internode port of every node")
	prom := fs.Int("prometheus_port", 9180, "metrics port of every node (0: off)")
	tokens := fs.Int("num_tokens", 16, "tokens per node")
	delay := fs.Duration("internode_injected_delay", 0, "test only: one-way delay added to every internode message")
	startWait := fs.Duration("start_timeout", 60*time.Second, "how long to wait for each node to serve clients")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *n < 1 || *n > 9 {
		fmt.Fprintln(stderr, "cqld cluster: -n must be 1 to 9")
		return 2
	}
	self, err := os.Executable()
	if err == nil {
		// The nodes' files name their folders absolutely, so that a node
		// restarts by the command printed below from any folder.
		*dir, err = filepath.Abs(*dir)
	}
	if err != nil {
		fmt.Fprintln(stderr, "cqld cluster:", err)
		return 1
	}
	var nodes []*clusterNode
	defer func() { stopNodes(nodes, stderr) }()
	for i := 1; i <= *n; i++ {
		cfg := clusterNodeConfig(i, *dir, *native, *storage, *prom, *tokens, *delay)
		nd, err := startClusterNode(self, i, *dir, cfg)
		if err != nil {
			fmt.Fprintln(stderr, "cqld cluster:", err)
			return 1
		}
		nodes = append(nodes, nd)
		if err := waitServing(ctx, nd, cfg.NativeAddr(), *startWait); err != nil {
			fmt.Fprintf(stderr, "cqld cluster: node%d: %v (its log: %s)\n", i, err, nd.logPath)
			return 1
		}
		fmt.Fprintf(stdout, "node%d  pid %-7d  cql %s  log %s\n", i, nd.cmd.Process.Pid, cfg.NativeAddr(), nd.logPath)
	}
	fmt.Fprintf(stdout, "\n%d nodes up. Connect with: cqlsh 127.0.0.1 %d\n", *n, *native)
	fmt.Fprintf(stdout, "Stop one node with: kill <pid>; restart node N with: %s -config %s\n", self,
		filepath.Join(*dir, "nodeN", "cassandra.yaml"))
	fmt.Fprintln(stdout, "Ctrl-C stops them all.")
	exited := make(chan *clusterNode, len(nodes))
	for _, nd := range nodes {
		go func() {
			<-nd.done
			exited <- nd
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return 0
		case nd := <-exited:
			fmt.Fprintf(stdout, "node%d (pid %d) exited: %v (its log: %s)\n", nd.index, nd.cmd.Process.Pid, nd.err, nd.logPath)
		}
	}
}

// clusterNodeConfig is node i's configuration.
func clusterNodeConfig(i int, dir string, native, storage, prom, tokens int, delay time.Duration) config.Config {
	addr := "127.0.0." + strconv.Itoa(i)
	home := filepath.Join(dir, "node"+strconv.Itoa(i))
	c := config.Default()
	c.ClusterName = "cqld cluster"
	c.ListenAddress, c.RPCAddress = addr, addr
	c.NativeTransportPort, c.StoragePort = native, storage
	c.PrometheusAddress, c.PrometheusPort = addr, prom
	c.NumTokens = tokens
	c.InternodeInjectedDelay = config.Duration{Duration: delay}
	c.DataFileDirectories = []string{filepath.Join(home, "data")}
	c.CommitlogDirectory = filepath.Join(home, "commitlog")
	c.SavedCachesDirectory = filepath.Join(home, "saved_caches")
	c.HintsDirectory = filepath.Join(home, "hints")
	c.SeedProvider.Parameters = map[string]string{"seeds": "127.0.0.1:" + strconv.Itoa(storage)}
	return c
}

// clusterNode is one node process.
type clusterNode struct {
	index               int
	cmd                 *exec.Cmd
	logPath, configPath string
	done                chan struct{} // closed when the process has exited
	err                 error         // its exit status, once done
}

func startClusterNode(self string, i int, dir string, cfg config.Config) (*clusterNode, error) {
	home := filepath.Join(dir, "node"+strconv.Itoa(i))
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	nd := &clusterNode{index: i, configPath: filepath.Join(home, "cassandra.yaml"), logPath: filepath.Join(home, "cqld.log"), done: make(chan struct{})}
	if err := os.WriteFile(nd.configPath, data, 0o644); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(nd.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	nd.cmd = exec.Command(self, "-config", nd.configPath)
	nd.cmd.Stdout, nd.cmd.Stderr = logf, logf
	if err := nd.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("node%d: %w", i, err)
	}
	go func() {
		nd.err = nd.cmd.Wait()
		logf.Close()
		close(nd.done)
	}()
	return nd, nil
}

// waitServing waits until addr accepts connections, the process exits, ctx
// ends or d passes.
func waitServing(ctx context.Context, nd *clusterNode, addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-nd.done:
			return fmt.Errorf("exited before serving clients: %v", nd.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not serving clients on %s after %s", addr, d)
		}
	}
}

// stopNodes sends SIGTERM to every node still running and waits for each,
// killing one that has not stopped within its drain time.
func stopNodes(nodes []*clusterNode, stderr io.Writer) {
	for _, nd := range nodes {
		_ = nd.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, nd := range nodes {
		select {
		case <-nd.done:
		case <-time.After(40 * time.Second):
			fmt.Fprintf(stderr, "cqld cluster: node%d did not stop; killing it\n", nd.index)
			_ = nd.cmd.Process.Kill()
			<-nd.done
		}
	}
}
