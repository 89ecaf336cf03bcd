package server

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/cqld/cqld/messaging"
)

// The fault injection endpoints (internode_fault_injection), on the
// metrics endpoint, for tests of cqld processes:
//
//	POST /debug/internode/partition?peers=127.0.0.2:7000,127.0.0.3
//	     cut this node off from those peers (an address without a port:
//	     every port of it); replaces the previous partition
//	GET  /debug/internode/partition   the peers cut off now
//	POST /debug/internode/heal        end the partition
//
// Each answers the peers cut off after it, comma-separated, on one line.
// Only loopback clients are served.
const (
	partitionPath = "/debug/internode/partition"
	healPath      = "/debug/internode/heal"
)

// faultHandlers returns the fault injection endpoints over p.
func faultHandlers(p messaging.Partitioner, log *slog.Logger) map[string]http.Handler {
	answer := func(w http.ResponseWriter) {
		var peers []string
		for _, a := range p.Partitioned() {
			peers = append(peers, a.String())
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, strings.Join(peers, ","))
	}
	return map[string]http.Handler{
		partitionPath: loopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Method {
			case http.MethodGet:
			case http.MethodPost:
				peers, err := parsePeers(r.URL.Query().Get("peers"))
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				log.Warn("fault injection: partitioning this node", "peers", peers, "client", r.RemoteAddr)
				p.Partition(peers)
			default:
				w.Header().Set("Allow", "GET, POST")
				http.Error(w, "GET or POST", http.StatusMethodNotAllowed)
				return
			}
			answer(w)
		})),
		healPath: loopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost {
				w.Header().Set("Allow", "POST")
				http.Error(w, "POST", http.StatusMethodNotAllowed)
				return
			}
			log.Warn("fault injection: healing this node's partition", "client", r.RemoteAddr)
			p.Heal()
			answer(w)
		})),
	}
}

// parsePeers parses a comma-separated list of internode addresses, each
// ip:port or an ip alone (port 0: every port).
func parsePeers(s string) ([]netip.AddrPort, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("peers: empty; want ip[:port],... of the peers to cut this node off from")
	}
	var out []netip.AddrPort
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if ap, err := netip.ParseAddrPort(f); err == nil {
			out = append(out, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("peers: %q is neither ip:port nor an ip", f)
		}
		out = append(out, netip.AddrPortFrom(a.Unmap(), 0))
	}
	return out, nil
}

// loopbackOnly answers 403 to clients not on a loopback address.
func loopbackOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		ip, perr := netip.ParseAddr(host)
		if err != nil || perr != nil || !ip.IsLoopback() {
			http.Error(w, "fault injection is served to loopback clients only", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
