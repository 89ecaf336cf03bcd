package test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// TestClusterCommand runs `cqld cluster -n 3` as a user does (README,
// "Running a cluster"), on ports of the test's own: it writes one
// cassandra.yaml per node under its folder, starts the three nodes on
// 127.0.0.1-3 and prints how to connect and how to stop and restart one; a
// driver given 127.0.0.1 alone finds all three and a keyspace of RF 3
// takes writes at QUORUM; on SIGINT (Ctrl-C) every node stops and the
// command exits.
func TestClusterCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cqld processes")
	}
	native, storage, prom := freePort(t), freePort(t), freePort(t)
	for i := 1; i <= 3; i++ {
		for _, p := range []int{native, storage, prom} {
			if !portFreeOn(fmt.Sprintf("127.0.0.%d", i), p) {
				t.Skipf("port %d is taken on 127.0.0.%d", p, i)
			}
		}
	}
	dir := t.TempDir()
	cmd := exec.Command(cqldBinary(t), "cluster", "-n", "3", "-dir", filepath.Join(dir, "cluster"),
		"-native_transport_port", strconv.Itoa(native), "-storage_port", strconv.Itoa(storage),
		"-prometheus_port", strconv.Itoa(prom), "-num_tokens", "8")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-exited:
			case <-time.After(60 * time.Second):
				_ = cmd.Process.Kill()
			}
		}
	})

	var printed []string
	var pids []int
	deadline := time.After(3 * time.Minute)
	for ready := false; !ready; {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("cqld cluster exited before its nodes were up:\n%s", strings.Join(printed, "\n"))
			}
			printed = append(printed, l)
			var i, pid int
			if _, err := fmt.Sscanf(l, "node%d  pid %d", &i, &pid); err == nil {
				pids = append(pids, pid)
			}
			ready = l == "Ctrl-C stops them all."
		case <-deadline:
			t.Fatalf("cqld cluster: not up within 3 minutes:\n%s", strings.Join(printed, "\n"))
		}
	}
	text := strings.Join(printed, "\n")
	for _, want := range []string{
		fmt.Sprintf("Connect with: cqlsh 127.0.0.1 %d", native),
		"Stop one node with: kill <pid>; restart node N with: ",
		filepath.Join(dir, "cluster", "nodeN", "cassandra.yaml"),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("cqld cluster printed no %q:\n%s", want, text)
		}
	}
	if len(pids) != 3 {
		t.Fatalf("cqld cluster printed %d nodes:\n%s", len(pids), text)
	}
	for i := 1; i <= 3; i++ {
		if _, err := os.Stat(filepath.Join(dir, "cluster", fmt.Sprintf("node%d", i), "cassandra.yaml")); err != nil {
			t.Errorf("node%d's configuration: %v", i, err)
		}
	}

	c := gocql.NewCluster("127.0.0.1")
	c.Port = native
	c.Timeout = 10 * time.Second
	c.Consistency = gocql.Quorum
	s, err := c.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eventually(t, 60*time.Second, "the driver seeing three nodes up", func() error {
		var n int
		if err := s.Query(`SELECT count(*) FROM system.peers`).Scan(&n); err != nil {
			return err
		}
		if n != 2 {
			return fmt.Errorf("%d peers", n)
		}
		return nil
	})
	for _, q := range []string{
		`CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`,
		`CREATE TABLE k.t (k int PRIMARY KEY, v int)`,
	} {
		if err := s.Query(q).Exec(); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	eventually(t, 60*time.Second, "a write at ALL (every node up and with the table)", func() error {
		return s.Query(`INSERT INTO k.t (k, v) VALUES (1, 1)`).Consistency(gocql.All).Exec()
	})
	s.Close()

	// Ctrl-C: the command stops every node and exits.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(2 * time.Minute)
	for done := false; !done; {
		select {
		case _, ok := <-lines: // what it prints as it stops
			if !ok {
				lines = nil
			}
		case err := <-exited:
			if err != nil {
				t.Errorf("cqld cluster after SIGINT: %v", err)
			}
			done = true
		case <-timeout:
			t.Fatal("cqld cluster still running 2 minutes after SIGINT")
		}
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("node pid %d still running after cqld cluster exited", pid)
		}
	}
}
