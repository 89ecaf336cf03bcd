package server

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/cqld/cqld/cluster"
	"github.com/cqld/cqld/config"
	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/tlsconf"
)

// DefaultCertReloadInterval is how often the node looks at its keystore
// and truststore files for changes.
const DefaultCertReloadInterval = time.Minute

// clientTLS is the frontend's TLS from client_encryption_options: the
// store to reload, the listener's configuration, whether plaintext
// clients are let in beside TLS ones, and the separate TLS address
// (native_transport_port_ssl), if any. All zero when TLS is off.
type clientTLS struct {
	store    *tlsconf.Store
	config   *tls.Config
	optional bool
	addr     string
}

func startClientTLS(cfg config.Config, log *slog.Logger) (clientTLS, error) {
	ce := cfg.ClientEncryptionOptions
	on, optional := ce.ClientTLS()
	if !on {
		return clientTLS{}, nil
	}
	st, err := tlsconf.Load(ce.TLSOptions(), tlsconf.StoreOptions{Name: "client_encryption_options", Logger: log})
	if err != nil {
		return clientTLS{}, err
	}
	c := clientTLS{store: st, config: st.ServerConfig(), optional: optional}
	if p := cfg.NativeTransportPortSSL; p != 0 && p != cfg.NativeTransportPort {
		c.addr = net.JoinHostPort(cfg.RPCAddress, strconv.Itoa(p))
	}
	if ce.TruststorePassword != "" {
		log.Warn("client_encryption_options: a PEM truststore has no password; truststore_password is ignored")
	}
	return c, nil
}

// internodeTLS is messaging's TLS from server_encryption_options: under
// all every peer is dialed with TLS, under dc the peers of other data
// centers, under rack those of other racks too; a peer not in the
// topology yet (a seed being joined) is dialed with TLS, which every
// node with internode encryption on accepts.
func internodeTLS(cfg config.Config, m *members, log *slog.Logger) (*tlsconf.Store, *messaging.TLS, error) {
	so := cfg.ServerEncryptionOptions
	on, optional := so.InternodeTLS()
	if !on {
		return nil, nil, nil
	}
	st, err := tlsconf.Load(so.TLSOptions(), tlsconf.StoreOptions{Name: "server_encryption_options", Logger: log})
	if err != nil {
		return nil, nil, err
	}
	mode := so.InternodeEncryption
	if so.RequireClientAuth && (mode == "dc" || mode == "rack") {
		log.Warn("server_encryption_options: require_client_auth with internode_encryption " + mode +
			" lets a node that claims to be in the same " + mode + " connect without a certificate; use all for mutual TLS between every node")
	}
	return st, &messaging.TLS{
		Server:   st.ServerConfig(),
		Optional: optional,
		Client: func(peer netip.AddrPort) *tls.Config {
			if !m.encryptTo(mode, peer, cfg.DataCenter, cfg.Rack) {
				return nil
			}
			return st.ClientConfig(peer.Addr().String())
		},
	}, nil
}

// encryptTo applies internode_encryption to a peer, by the data center
// and rack the topology gives it.
func (m *members) encryptTo(mode string, peer netip.AddrPort, dc, rack string) bool {
	var (
		mem cluster.Member
		ok  bool
	)
	if node := m.node.Load(); node != nil {
		mem, ok = node.Topology().ByAddr(peer)
	}
	return encrypts(mode, ok, mem.DataCenter, mem.Rack, dc, rack)
}

// encrypts is internode_encryption's rule: under dc a peer of another data
// center, under rack one of another rack too, is dialed with TLS; one this
// node does not know yet (known false) always is.
func encrypts(mode string, known bool, peerDC, peerRack, dc, rack string) bool {
	switch {
	case mode == "none":
		return false
	case mode == "all", !known, peerDC != dc:
		return true
	}
	return mode == "rack" && peerRack != rack
}

// watchCerts reloads a store's files at every interval until ctx ends.
func watchCerts(ctx context.Context, st *tlsconf.Store, every time.Duration) {
	st.Watch(ctx, tlsconf.NewTicker(every))
}
