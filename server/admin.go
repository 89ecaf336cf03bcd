package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/netip"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/frontend"
	"github.com/cqld/cqld/metrics"
	"github.com/cqld/cqld/tlsconf"
)

// The admin requests `cqld nodetool` sends to a node's metrics endpoint,
// where Cassandra's nodetool talks JMX. It listens on prometheus_address,
// 127.0.0.1 unless configured otherwise. Reading (status, netstats) is
// open, as /metrics is. Every request that changes state takes a POST and,
// under PasswordAuthenticator, credentials by HTTP basic authentication
// (nodetool -u/-pw), checked as a CQL login is and counted against the
// same limit of failed logins: a role's for reloadssl and the test-only
// fault injection (metrics.RequireLogin), a superuser's for the topology
// (decommission, removenode), which answer refusals as AdminError.
const (
	decommissionPath = "/nodetool/decommission"
	removenodePath   = "/nodetool/removenode"
	netstatsPath     = "/nodetool/netstats"
	// reloadSSLPath reloads the node's certificates now, for `cqld
	// nodetool reloadssl` (Cassandra's nodetool reloadssl).
	reloadSSLPath = "/nodetool/reloadssl"
)

// adminEndpoints are the handlers the metrics endpoint serves beside
// /metrics. more are further state-changing endpoints (the fault
// injection of internode_fault_injection). Under CassandraAuthorizer the
// role of reloadssl and the fault injection must be a superuser too:
// Cassandra's JMX takes permissions on its MBeans, which cqld has not,
// so no other role may be granted them.
func (n *Node) adminEndpoints(authn frontend.Authenticator, more map[string]http.Handler) map[string]http.Handler {
	out := map[string]http.Handler{
		statusPath: n.members.statusHandler(n.engine, n.catalog),
		netstatsPath: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, Netstats{Mode: n.changes.Mode(), Progress: n.changes.Progress()})
		}),
		decommissionPath: n.admin(func(ctx context.Context, r *http.Request) error {
			return n.changes.decommission(ctx, r.FormValue("force") == "true")
		}),
		removenodePath: n.admin(func(ctx context.Context, r *http.Request) error {
			return n.changes.removenode(ctx, r.FormValue("host_id"))
		}),
	}
	change := map[string]http.Handler{
		reloadSSLPath: postOnly(http.HandlerFunc(n.reloadSSL)),
	}
	maps.Copy(change, more)
	var a metrics.Authenticator
	if authn != nil {
		a = authn
		if n.cfg.Authorizer == "CassandraAuthorizer" {
			a = superusers{authn: authn, roles: n.Auth}
		}
	}
	for path, h := range change {
		out[path] = metrics.RequireLogin(a, h)
	}
	return out
}

// AdminError is the body of a refused admin request: Cassandra's
// exception class (nodetool prints UnsupportedOperationException as
// "Unsupported operation: ...") and its message.
type AdminError struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

// Netstats is what /nodetool/netstats answers.
type Netstats struct {
	Mode     string   `json:"mode"`
	Progress Progress `json:"progress"`
}

// admin serves a POST that changes the topology: it runs op to its end,
// even if the client goes away, and answers 200 or the refusal.
func (n *Node) admin(op func(context.Context, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, AdminError{Class: "IllegalArgumentException", Message: r.Method + " " + r.URL.Path + ": use POST"})
			return
		}
		if err := n.adminAuthorized(r); err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="cqld"`)
			writeJSON(w, http.StatusUnauthorized, AdminError{Class: "SecurityException", Message: err.Error()})
			return
		}
		err := op(context.WithoutCancel(r.Context()), r)
		if err != nil {
			n.log.Warn("admin request refused or failed", "path", r.URL.Path, "err", err)
			class := "RuntimeException"
			var oe *opError
			status := http.StatusInternalServerError
			if errors.As(err, &oe) {
				class, status = oe.class, http.StatusConflict
			}
			writeJSON(w, status, AdminError{Class: class, Message: err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, struct{}{})
	})
}

// adminAuthorized checks the request's basic credentials when clients
// must log in: a superuser's, with the native transport's limit on
// failed attempts per address.
func (n *Node) adminAuthorized(r *http.Request) error {
	if n.authn == nil {
		return nil
	}
	remote, token, ok := metrics.Login(r)
	if !ok {
		return errors.New("Required key 'username' is missing: this node requires authentication (nodetool -u USER -pw PASSWORD)")
	}
	s := superusers{authn: n.authn, roles: n.Auth, refusal: "Only superusers may change the topology; %s is not one"}
	_, err := s.Authenticate(remote, token)
	return err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// superusers logs in as authn does and refuses a role that is not a
// superuser, with refusal (the role for its %s), or by default as under
// CassandraAuthorizer.
type superusers struct {
	authn   frontend.Authenticator
	roles   *auth.Store
	refusal string
}

var _ metrics.Authenticator = superusers{}

func (s superusers) Authenticate(remote netip.Addr, token []byte) (string, error) {
	role, err := s.authn.Authenticate(remote, token)
	if err != nil {
		return "", err
	}
	if !s.roles.State().IsSuper(role) {
		refusal := s.refusal
		if refusal == "" {
			refusal = "Access Denied: %s is not a superuser, which this endpoint requires under CassandraAuthorizer"
		}
		return "", fmt.Errorf(refusal, role)
	}
	return role, nil
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
	writeJSON(w, status, out)
}
