package gossip

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// joinLoop reaches the seeds, then keeps trying the nodes held down. A
// node with no other seed is the cluster's first: it has joined at once.
// Each failed attempt at the seeds is logged once, with the wait before
// the next, which doubles up to MaxJoinBackoff.
func (g *Gossip) joinLoop() {
	seeds, isSeed := g.others(g.opts.Seeds)
	backoff := g.timing.JoinBackoff
	if known, _ := g.others(g.opts.Known); len(known) > 0 {
		if n, err := g.ml.Join(addrStrings(known)); n > 0 {
			g.log.Info("gossip: reached the members known from before", "answering", n, "of", len(known), "members", g.ml.NumMembers())
		} else {
			g.log.Debug("gossip: no member known from before answered", "err", flatten(err))
		}
	}
	for len(seeds) > 0 && !g.hasPeers() {
		n, err := g.ml.Join(addrStrings(seeds))
		if n > 0 {
			g.log.Info("gossip: joined the cluster", "seeds", joinAddrs(seeds), "seeds_answering", n, "members", g.ml.NumMembers())
			break
		}
		if g.hasPeers() {
			break // a peer reached us meanwhile
		}
		g.log.Warn(fmt.Sprintf("gossip: seeds %s unreachable, retrying in %v", joinAddrs(seeds), backoff), "err", flatten(err))
		if isSeed {
			// The cluster's other seeds are down: this one starts it.
			g.markJoined()
		}
		if !g.sleep(backoff) {
			return
		}
		backoff = min(2*backoff, g.timing.MaxJoinBackoff)
	}
	g.markJoined()
	for g.sleep(g.timing.ReconnectInterval) {
		g.reconnect()
	}
}

// reconnect tries once to reach each node held down: the push/pull lets
// the two sides of a healed partition, which stopped gossiping to each
// other after GossipToTheDeadTime, learn that the other is alive.
func (g *Gossip) reconnect() {
	g.mu.Lock()
	if g.left {
		g.mu.Unlock()
		return
	}
	var down []netip.AddrPort
	for _, m := range g.members {
		if !m.Up {
			down = append(down, m.Addr)
		}
	}
	g.mu.Unlock()
	for _, a := range down {
		if _, err := g.ml.Join([]string{a.String()}); err == nil {
			g.log.Debug("gossip: reached a node held down", "addr", a)
		}
		select {
		case <-g.stop:
			return
		default:
		}
	}
}

// others returns the addresses of list but this node's, and whether
// this node's was among them.
func (g *Gossip) others(list []netip.AddrPort) (others []netip.AddrPort, self bool) {
	for _, a := range list {
		a = netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
		if a == g.self {
			self = true
			continue
		}
		others = append(others, a)
	}
	return others, self
}

func (g *Gossip) hasPeers() bool { return g.ml.NumMembers() > 1 }

// sleep waits d, or until Close; it reports whether gossip is still open.
func (g *Gossip) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-g.stop:
		return false
	}
}

func addrStrings(as []netip.AddrPort) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

func joinAddrs(as []netip.AddrPort) string { return strings.Join(addrStrings(as), ",") }

// flatten puts memberlist's join error ("2 errors occurred:\n\t* …\n\t* …")
// on one line, its errors separated by semicolons.
func flatten(err error) string {
	if err == nil {
		return ""
	}
	parts := strings.Split(strings.TrimSpace(err.Error()), "\n\t* ")
	if len(parts) > 1 {
		parts = parts[1:]
	}
	return strings.Join(parts, "; ")
}
