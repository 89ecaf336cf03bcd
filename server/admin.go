package server

import (
	"encoding/json"
	"maps"
	"net/http"

	"github.com/cqld/cqld/frontend"
	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/tlsconf"
)

// reloadSSLPath reloads the node's certificates now, for `cqld nodetool
// reloadssl` (Cassandra's nodetool reloadssl).
const reloadSSLPath = "/nodetool/reloadssl"

// adminEndpoints are the handlers the metrics endpoint serves beside
// /metrics. It listens on prometheus_address, 127.0.0.1 unless configured
// otherwise. Endpoints that only read are open; those that change state
// are wrapped in metrics.RequireLogin, so that under PasswordAuthenticator
// they take a role's credentials (HTTP basic auth), checked as a CQL login
// is and counted against the same limit of failed logins. An endpoint
// that changes state goes in change, or comes in more (the fault
// injection of internode_fault_injection).
func (n *Node) adminEndpoints(authn frontend.Authenticator, more map[string]http.Handler) map[string]http.Handler {
	read := map[string]http.Handler{
		statusPath: n.members.statusHandler(n.engine),
	}
	change := map[string]http.Handler{
		reloadSSLPath: postOnly(http.HandlerFunc(n.reloadSSL)),
	}
	maps.Copy(change, more)
	var a metrics.Authenticator
	if authn != nil {
		a = authn
	}
	for path, h := range change {
		read[path] = metrics.RequireLogin(a, h)
	}
	return read
}

// postOnly refuses every method but POST: a state change is never a GET,
// which browsers and proxies may repeat or prefetch.
func postOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "use POST: this endpoint changes state", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ReloadSSLResult is what /nodetool/reloadssl answers, per set of
// encryption options: reloaded, unchanged, off, or the error that kept
// the old certificates.
type ReloadSSLResult map[string]string

func (n *Node) reloadSSL(w http.ResponseWriter, _ *http.Request) {
	out := ReloadSSLResult{}
	status := http.StatusOK
	for name, st := range map[string]*tlsconf.Store{"client_encryption_options": n.clientCerts, "server_encryption_options": n.internodeCerts} {
		if st == nil {
			out[name] = "off"
			continue
		}
		switch changed, err := st.Reload(); {
		case err != nil:
			out[name] = err.Error()
			status = http.StatusInternalServerError
		case changed:
			out[name] = "reloaded"
		default:
			out[name] = "unchanged"
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(out)
}
