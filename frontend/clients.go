package frontend

import (
	"crypto/tls"
	"net"
	"net/netip"
	"strings"
)

// startupInfo is what a client said in its STARTUP.
type startupInfo struct {
	version                   int
	driverName, driverVersion string
}

// ClientInfo is one connection as system_views.clients shows it.
type ClientInfo struct {
	Addr netip.AddrPort
	// Stage is established (before STARTUP), authenticating or ready.
	Stage                     string
	Username                  string // "" before login or without authentication
	ProtocolVersion           int    // 0 before STARTUP
	DriverName, DriverVersion string // "" when the driver did not say
	Requests                  int64
	// SSL is a TLS connection, its protocol ("TLSv1.3") and cipher suite.
	SSL                    bool
	SSLProtocol, SSLCipher string
}

// Clients returns the connections open now. It is safe for concurrent use.
func (s *Server) Clients() []ClientInfo {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for cn := range s.conns {
		conns = append(conns, cn)
	}
	s.mu.Unlock()
	out := make([]ClientInfo, 0, len(conns))
	for _, cn := range conns {
		ci := ClientInfo{Stage: "established", Requests: cn.requests.Load()}
		if a, ok := cn.remote.(*net.TCPAddr); ok {
			ci.Addr = a.AddrPort()
		}
		if st := cn.hello.Load(); st != nil {
			ci.Stage, ci.ProtocolVersion, ci.DriverName, ci.DriverVersion = "authenticating", st.version, st.driverName, st.driverVersion
		}
		if cn.ready.Load() {
			ci.Stage = "ready"
		}
		if r := cn.role.Load(); r != nil {
			ci.Username = *r
		}
		if t, ok := cn.gc.(*tlsSock); ok {
			cs := t.tc.ConnectionState()
			ci.SSL = true
			ci.SSLProtocol = strings.Replace(tls.VersionName(cs.Version), "TLS ", "TLSv", 1)
			ci.SSLCipher = tls.CipherSuiteName(cs.CipherSuite)
		}
		out = append(out, ci)
	}
	return out
}

// PoolInfo is a pool of work as system_views.thread_pools shows it.
type PoolInfo struct {
	Name                         string
	Active, ActiveLimit, Pending int32
	Completed, BlockedAll        int64
}

// Pools returns the request workers (Native-Transport-Requests, as in
// Cassandra: the requests refused with a full queue are the ones it
// counts blocked) and the event loops (busy: as many as connections with
// requests in flight, at most all; completed: the requests read). It is
// safe for concurrent use.
func (s *Server) Pools() []PoolInfo {
	p := s.pool
	loops := int32(s.opts.EventLoops)
	return []PoolInfo{
		{Name: "Native-Transport-Requests", Active: p.active.Load(), ActiveLimit: int32(p.workers),
			Pending: int32(p.pending()), Completed: p.completed.Load(), BlockedAll: p.refused.Load()},
		{Name: "Native-Transport-Event-Loops", Active: min(int32(s.activeConns.Load()), loops), ActiveLimit: loops,
			Completed: s.requests.Load()},
	}
}
