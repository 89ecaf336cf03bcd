// Command cqlstress is a cassandra-stress-like load tool for CQL servers;
// see package stress and `cqlstress help`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/cqld/cqld/stress"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills the process
	}()
	os.Exit(stress.Main(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
