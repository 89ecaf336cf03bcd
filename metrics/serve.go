package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry with the Go runtime and process collectors,
// which every cqld process exposes.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Server serves /metrics over HTTP.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{} // closed when the serving goroutine returns
}

// Serve listens on addr and serves g's metrics on /metrics until Close.
func Serve(addr string, g prometheus.Gatherer) (*Server, error) {
	return ServeWith(addr, g, nil)
}

// ServeWith is Serve with more handlers, by path, beside /metrics (the
// node's status for `cqld nodetool`). Go's profiles are on /debug/pprof/
// for loopback clients.
func ServeWith(addr string, g prometheus.Gatherer, handlers map[string]http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.Handle("/debug/pprof/", pprofHandler())
	for path, h := range handlers {
		mux.Handle(path, h)
	}
	s := &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics endpoint stopped", "addr", s.Addr(), "err", err)
		}
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server, waiting up to ctx for scrapes in progress, and
// returns once its serving goroutine has.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}
