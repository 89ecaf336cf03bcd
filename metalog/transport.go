package metalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/cqld/cqld/messaging"
	"github.com/hashicorp/raft"
)

// Failure codes of VerbMetadata's failure responses.
const (
	// codeBadMessage: the request does not decode; nothing was done.
	codeBadMessage uint16 = 100 + iota
	// codeRaft: raft answered the RPC with an error.
	codeRaft
	// codeNotLeader: the receiver is not the leader and knows of none to
	// forward to; nothing was done, the sender may try again.
	codeNotLeader
	// codeFailed: the leader tried what a forward asked and failed.
	codeFailed
	// codeClosed: the receiver's log is closing.
	codeClosed
	// codeUnknown: the leader took the request but does not know whether
	// it will be done (it lost its leadership, or the deadline passed).
	codeUnknown
	// codeWrongServer: a raft RPC for another server id than the
	// receiver's (the node at that address was wiped or replaced).
	codeWrongServer
	// codeAddressTaken: a join of a node whose address is another
	// server's; it may not be sent again.
	codeAddressTaken
)

// snapshotOverhead is the room a snapshot message leaves for its fields
// besides the snapshot.
const snapshotOverhead = 64 << 10

// raftTransport is raft.Transport over a messaging.Transport: every RPC is
// one request on VerbMetadata, answered by the peer's raftTransport. A
// snapshot travels whole in one message, so it is bounded by the
// messaging's MaxMessageSize. Pipelining is not offered: raft then sends
// one AppendEntries at a time to each follower, which a metadata log's
// rate of entries never notices.
//
// Safe for concurrent use.
type raftTransport struct {
	msg     messaging.Transport
	id      raft.ServerID // this node's: RPCs for another id are refused
	local   raft.ServerAddress
	timeout time.Duration
	// maxSnapshot bounds the snapshot one InstallSnapshot carries.
	maxSnapshot int64

	consumer chan raft.RPC
	// forwards serves the Log's own requests (Propose, Join, Remove);
	// probes answers a probe; misaddressed is told of each RPC refused
	// because it was for another server.
	forwards     func(ctx context.Context, f *forward) ([]byte, error)
	probes       func() ([]byte, error)
	misaddressed func(from netip.AddrPort, rpc any, to raft.ServerID)

	hbMu      sync.Mutex
	heartbeat func(raft.RPC)

	ctx       context.Context // cancelled by Close: the RPCs in flight end
	cancel    context.CancelFunc
	closeOnce sync.Once
}

var (
	_ raft.Transport   = (*raftTransport)(nil)
	_ raft.WithPreVote = (*raftTransport)(nil)
	_ raft.WithClose   = (*raftTransport)(nil)
)

func newRaftTransport(msg messaging.Transport, id raft.ServerID, local netip.AddrPort, timeout time.Duration, maxMessage int) *raftTransport {
	ctx, cancel := context.WithCancel(context.Background())
	return &raftTransport{
		msg:         msg,
		id:          id,
		local:       raft.ServerAddress(local.String()),
		timeout:     timeout,
		maxSnapshot: int64(maxMessage - snapshotOverhead),
		consumer:    make(chan raft.RPC),
		ctx:         ctx,
		cancel:      cancel,
	}
}

// Consumer implements raft.Transport.
func (t *raftTransport) Consumer() <-chan raft.RPC { return t.consumer }

// LocalAddr implements raft.Transport.
func (t *raftTransport) LocalAddr() raft.ServerAddress { return t.local }

// AppendEntriesPipeline implements raft.Transport: not supported.
func (t *raftTransport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}

// AppendEntries implements raft.Transport.
func (t *raftTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	return call(t, target, &addressed{to: string(id), rpc: args}, resp, t.timeout)
}

// RequestVote implements raft.Transport.
func (t *raftTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	return call(t, target, &addressed{to: string(id), rpc: args}, resp, t.timeout)
}

// RequestPreVote implements raft.WithPreVote.
func (t *raftTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	return call(t, target, &addressed{to: string(id), rpc: args}, resp, t.timeout)
}

// TimeoutNow implements raft.Transport.
func (t *raftTransport) TimeoutNow(id raft.ServerID, target raft.ServerAddress, args *raft.TimeoutNowRequest, resp *raft.TimeoutNowResponse) error {
	return call(t, target, &addressed{to: string(id), rpc: args}, resp, t.timeout)
}

// InstallSnapshot implements raft.Transport. The snapshot is read whole
// into the message.
func (t *raftTransport) InstallSnapshot(id raft.ServerID, target raft.ServerAddress, args *raft.InstallSnapshotRequest, resp *raft.InstallSnapshotResponse, data io.Reader) error {
	if args.Size < 0 || args.Size > t.maxSnapshot {
		return fmt.Errorf("metalog: snapshot %d to %s is %d bytes, more than the %d bytes one internode message carries",
			args.LastLogIndex, target, args.Size, t.maxSnapshot)
	}
	m := &installSnapshot{req: *args, data: make([]byte, args.Size)}
	if _, err := io.ReadFull(data, m.data); err != nil {
		return fmt.Errorf("metalog: read snapshot %d: %w", args.LastLogIndex, err)
	}
	// A snapshot takes longer to write and to persist than an RPC.
	return call(t, target, &addressed{to: string(id), rpc: m}, resp, t.timeout*time.Duration(1+args.Size>>20))
}

// EncodePeer implements raft.Transport: a peer is its address.
func (t *raftTransport) EncodePeer(_ raft.ServerID, addr raft.ServerAddress) []byte {
	return []byte(addr)
}

// DecodePeer implements raft.Transport.
func (t *raftTransport) DecodePeer(b []byte) raft.ServerAddress { return raft.ServerAddress(b) }

// SetHeartbeatHandler implements raft.Transport.
func (t *raftTransport) SetHeartbeatHandler(cb func(rpc raft.RPC)) {
	t.hbMu.Lock()
	defer t.hbMu.Unlock()
	t.heartbeat = cb
}

// Close implements raft.WithClose; raft calls it as it shuts down. RPCs
// in flight, both ways, end.
func (t *raftTransport) Close() error {
	t.closeOnce.Do(t.cancel)
	return nil
}

// call sends req to target and decodes the response into resp, which
// must be a pointer to the response type of req.
func call[R any](t *raftTransport, target raft.ServerAddress, req any, resp *R, timeout time.Duration) error {
	b, err := t.request(target, req, timeout)
	if err != nil {
		return err
	}
	m, err := decodeMessage(b)
	if err != nil {
		return fmt.Errorf("metalog: response from %s: %w", target, err)
	}
	r, ok := m.(*R)
	if !ok {
		return fmt.Errorf("%w: response from %s is a %T, want a %T", ErrBadMessage, target, m, resp)
	}
	*resp = *r
	return nil
}

// request sends the message m to target and returns the response's bytes.
func (t *raftTransport) request(target raft.ServerAddress, m any, timeout time.Duration) ([]byte, error) {
	to, err := netip.ParseAddrPort(string(target))
	if err != nil {
		return nil, fmt.Errorf("metalog: server address %q: %w", target, err)
	}
	payload, err := encodeMessage(m)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(t.ctx, timeout)
	defer cancel()
	b, err := t.msg.Request(ctx, to, messaging.VerbMetadata, payload)
	if err != nil {
		return nil, fmt.Errorf("metalog: %s to %s: %w", rpcName(m), target, err)
	}
	return b, nil
}

// rpcName names a request in an error: its raft type's name
// (AppendEntriesRequest), not the envelope that addresses it.
func rpcName(m any) string {
	if a, ok := m.(*addressed); ok {
		m = a.rpc
	}
	n := fmt.Sprintf("%T", m)
	return n[strings.LastIndexByte(n, '.')+1:]
}

// handle serves one request on VerbMetadata. Bytes that do not decode are
// answered codeBadMessage and change nothing.
func (t *raftTransport) handle(ctx context.Context, in messaging.Inbound) ([]byte, error) {
	m, err := decodeMessage(in.Payload)
	if err != nil {
		return nil, &messaging.RemoteError{Code: codeBadMessage, Message: err.Error()}
	}
	switch m := m.(type) {
	case *addressed:
		if raft.ServerID(m.to) != t.id {
			if t.misaddressed != nil {
				t.misaddressed(in.From, m.rpc, raft.ServerID(m.to))
			}
			return nil, &messaging.RemoteError{Code: codeWrongServer, Message: fmt.Sprintf(
				"metalog: %T for server %s, but the node at %s is server %s (wiped or replaced?)", m.rpc, m.to, t.local, t.id)}
		}
		switch r := m.rpc.(type) {
		case *raft.AppendEntriesRequest:
			return t.serveRPC(ctx, r, nil, isHeartbeat(r))
		case *installSnapshot:
			return t.serveRPC(ctx, &r.req, bytes.NewReader(r.data), false)
		default:
			return t.serveRPC(ctx, r, nil, false)
		}
	case *forward:
		if t.forwards == nil {
			return nil, &messaging.RemoteError{Code: codeClosed, Message: "metalog: not serving"}
		}
		return t.forwards(ctx, m)
	case *probe:
		if t.probes == nil {
			return nil, &messaging.RemoteError{Code: codeClosed, Message: "metalog: not serving"}
		}
		return t.probes()
	default:
		// A raft RPC must say which server it is for.
		if isRPCRequest(m) {
			return nil, &messaging.RemoteError{Code: codeBadMessage, Message: fmt.Sprintf("metalog: %T without the server id it is for", m)}
		}
		return nil, &messaging.RemoteError{Code: codeBadMessage, Message: fmt.Sprintf("metalog: %T is not a request", m)}
	}
}

// isHeartbeat reports whether r is a heartbeat, which raft's heartbeat
// handler serves without waiting behind the log's disk writes (raft's
// NetworkTransport tells them apart the same way).
func isHeartbeat(r *raft.AppendEntriesRequest) bool {
	leader := r.Addr
	if len(leader) == 0 {
		leader = r.Leader
	}
	return r.Term != 0 && leader != nil && r.PrevLogEntry == 0 && r.PrevLogTerm == 0 &&
		len(r.Entries) == 0 && r.LeaderCommitIndex == 0
}

// serveRPC hands one RPC to raft and encodes its response.
func (t *raftTransport) serveRPC(ctx context.Context, cmd any, data io.Reader, heartbeat bool) ([]byte, error) {
	respCh := make(chan raft.RPCResponse, 1)
	rpc := raft.RPC{Command: cmd, Reader: data, RespChan: respCh}
	var fn func(raft.RPC)
	if heartbeat {
		t.hbMu.Lock()
		fn = t.heartbeat
		t.hbMu.Unlock()
	}
	if fn != nil {
		fn(rpc)
	} else {
		select {
		case t.consumer <- rpc:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.ctx.Done():
			return nil, &messaging.RemoteError{Code: codeClosed, Message: raft.ErrTransportShutdown.Error()}
		}
	}
	select {
	case r := <-respCh:
		if r.Error != nil {
			return nil, &messaging.RemoteError{Code: codeRaft, Message: r.Error.Error()}
		}
		return encodeMessage(r.Response)
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.ctx.Done():
		return nil, &messaging.RemoteError{Code: codeClosed, Message: raft.ErrTransportShutdown.Error()}
	}
}

// remoteCode returns the failure code of a *messaging.RemoteError in err's
// chain, and whether there is one.
func remoteCode(err error) (uint16, bool) {
	var re *messaging.RemoteError
	if errors.As(err, &re) {
		return re.Code, true
	}
	return 0, false
}
