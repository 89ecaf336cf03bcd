package metrics

import (
	"net/http"
	"net/http/pprof"
)

// pprofHandler serves Go's runtime profiles (net/http/pprof) under
// /debug/pprof/ to clients on a loopback address alone: a profile shows
// the process's code paths and memory, which are for the operator on the
// machine, not for whoever reaches the metrics port. Others get 403.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopback(r.RemoteAddr) {
			http.Error(w, "profiles are served to loopback clients only", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// loopback reports whether a request's remote address (host:port) is a
// loopback one (127.0.0.0/8, ::1).
func loopback(remote string) bool { return addrOf(remote).IsLoopback() }
