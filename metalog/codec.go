package metalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// codecVersion is the first byte of every message on VerbMetadata and of
// every log entry on disk. The formats are frozen; a change takes a new
// version.
const codecVersion = 1

// kind is the second byte of a message: what it carries.
type kind byte

// The kinds of message. Frozen: new kinds are added at the end.
const (
	kindAppendEntries kind = iota + 1
	kindAppendEntriesResp
	kindRequestVote
	kindRequestVoteResp
	kindPreVote
	kindPreVoteResp
	kindInstallSnapshot
	kindInstallSnapshotResp
	kindTimeoutNow
	kindTimeoutNowResp
	kindPropose // an entry forwarded to the leader
	kindJoin    // add a voter, forwarded to the leader
	kindRemove  // remove a server, forwarded to the leader
	kindIndex   // the answer to kindPropose, kindJoin and kindRemove
	// kindAddressed is a raft RPC request with the server id it is for:
	// the receiver refuses one for another server (codeWrongServer).
	kindAddressed
	kindProbe         // which servers do you know? (a new first seed asks the others)
	kindConfiguration // the answer to kindProbe: the latest configuration, empty without raft state
	kindEnd           // one past the last kind
)

// Bounds of what a decoder accepts, beyond the bytes that are left.
const (
	maxNameLen = 256  // a server id, an address
	maxEntries = 1024 // entries of one AppendEntries (raft's MaxAppendEntries cap)
	maxServers = 1024 // servers of one configuration
	maxHops    = 1    // a forwarded request is forwarded at most once more
)

// ErrBadMessage means bytes from a peer (or the log on disk) do not decode.
var ErrBadMessage = errors.New("metalog: malformed message")

// installSnapshot is an InstallSnapshotRequest with the whole snapshot.
type installSnapshot struct {
	req  raft.InstallSnapshotRequest
	data []byte
}

// forward is a Propose, Join or Remove sent to another member, to be done
// by the leader. hops counts the times it was forwarded already.
type forward struct {
	kind  kind
	hops  uint8
	entry []byte // kindPropose: the enveloped entry
	id    string // kindJoin, kindRemove: the server
	addr  string // kindJoin: its address
}

// indexResponse answers a forward with the index of the log entry it
// became.
type indexResponse struct{ index uint64 }

// addressed is a raft RPC request (a pointer to raft's AppendEntries,
// RequestVote, RequestPreVote or TimeoutNow request, or an
// *installSnapshot) and the id of the server it is for.
type addressed struct {
	to  string
	rpc any
}

// probe asks a member which servers it knows; configuration answers.
type (
	probe         struct{}
	configuration struct{ cfg raft.Configuration }
)

// encoder appends the codec's primitives to b.
type encoder struct{ b []byte }

func (e *encoder) uint(v uint64)  { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) byte(v byte)    { e.b = append(e.b, v) }
func (e *encoder) bytes(p []byte) { e.uint(uint64(len(p))); e.b = append(e.b, p...) }
func (e *encoder) string(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

func (e *encoder) bool(v bool) {
	if v {
		e.byte(1)
	} else {
		e.byte(0)
	}
}

func (e *encoder) time(t time.Time) {
	if t.IsZero() {
		e.b = binary.AppendVarint(e.b, 0)
		return
	}
	e.b = binary.AppendVarint(e.b, t.UnixNano())
}

func (e *encoder) header(h raft.RPCHeader) {
	e.uint(uint64(h.ProtocolVersion))
	e.bytes(h.ID)
	e.bytes(h.Addr)
}

// decoder reads the codec's primitives from b. The first failure sticks:
// later reads return zero values, and err says what failed. Byte slices it
// returns alias b.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrBadMessage, what)
	}
	d.b = nil
}

func (d *decoder) uint(what string) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte(what string) byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail(what)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) bool(what string) bool {
	switch d.byte(what) {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail(what)
	return false
}

// bytes reads a length-prefixed byte string of at most max bytes (max < 0:
// any length that is left). An empty one is nil.
func (d *decoder) bytes(what string, max int) []byte {
	n := d.uint(what)
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) || (max >= 0 && n > uint64(max)) {
		d.fail(what)
		return nil
	}
	if n == 0 {
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) string(what string, max int) string { return string(d.bytes(what, max)) }

func (d *decoder) time(what string) time.Time {
	if d.err != nil {
		return time.Time{}
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return time.Time{}
	}
	d.b = d.b[n:]
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, v)
}

func (d *decoder) header() raft.RPCHeader {
	var h raft.RPCHeader
	v := d.uint("protocol version")
	if v > uint64(raft.ProtocolVersionMax) {
		d.fail("protocol version")
	}
	h.ProtocolVersion = raft.ProtocolVersion(v)
	h.ID = d.bytes("header id", maxNameLen)
	h.Addr = d.bytes("header address", maxNameLen)
	return h
}

// count reads a count of items each at least minSize bytes long, at most
// max of them.
func (d *decoder) count(what string, max, minSize int) int {
	n := d.uint(what)
	if d.err != nil {
		return 0
	}
	if n > uint64(max) || n*uint64(minSize) > uint64(len(d.b)) {
		d.fail(what)
		return 0
	}
	return int(n)
}

// done fails unless every byte was read.
func (d *decoder) done() error {
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return d.err
}

// appendLog encodes l. On the wire (wire true) a configuration entry's
// data travels in this codec's form, so that the receiver never hands
// raft msgpack bytes from a peer (raft panics on ones that do not decode);
// on disk it is raft's own bytes.
func appendLog(e *encoder, l *raft.Log, wire bool) error {
	e.uint(l.Index)
	e.uint(l.Term)
	e.byte(byte(l.Type))
	if wire && l.Type == raft.LogConfiguration {
		cfg, err := decodeRaftConfiguration(l.Data)
		if err != nil {
			return fmt.Errorf("metalog: log entry %d: %w", l.Index, err)
		}
		appendConfiguration(e, cfg)
	} else {
		e.bytes(l.Data)
	}
	e.bytes(l.Extensions)
	e.time(l.AppendedAt)
	return nil
}

// minLogSize is the fewest bytes an encoded log entry takes.
const minLogSize = 6

func readLog(d *decoder, l *raft.Log, wire bool) {
	l.Index = d.uint("log index")
	l.Term = d.uint("log term")
	l.Type = raft.LogType(d.byte("log type"))
	switch l.Type {
	case raft.LogCommand, raft.LogNoop, raft.LogBarrier, raft.LogConfiguration:
	default:
		d.fail("log type")
	}
	if wire && l.Type == raft.LogConfiguration {
		l.Data = raft.EncodeConfiguration(readConfiguration(d))
	} else {
		l.Data = d.bytes("log data", -1)
	}
	l.Extensions = d.bytes("log extensions", -1)
	l.AppendedAt = d.time("log time")
}

// decodeRaftConfiguration decodes raft's own encoding of a configuration,
// which raft.DecodeConfiguration does by panicking on bad bytes.
func decodeRaftConfiguration(b []byte) (cfg raft.Configuration, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("metalog: configuration does not decode: %v", r)
		}
	}()
	return raft.DecodeConfiguration(b), nil
}

func appendConfiguration(e *encoder, cfg raft.Configuration) {
	e.uint(uint64(len(cfg.Servers)))
	for _, s := range cfg.Servers {
		e.byte(byte(s.Suffrage))
		e.string(string(s.ID))
		e.string(string(s.Address))
	}
}

func readConfiguration(d *decoder) raft.Configuration {
	n := d.count("servers", maxServers, 3)
	cfg := raft.Configuration{Servers: make([]raft.Server, 0, n)}
	for range n {
		var s raft.Server
		s.Suffrage = raft.ServerSuffrage(d.byte("suffrage"))
		if s.Suffrage > raft.Staging {
			d.fail("suffrage")
		}
		s.ID = raft.ServerID(d.string("server id", maxNameLen))
		s.Address = raft.ServerAddress(d.string("server address", maxNameLen))
		cfg.Servers = append(cfg.Servers, s)
	}
	return cfg
}

// encodeMessage encodes one of the messages of VerbMetadata: a pointer to
// one of raft's RPC requests or responses, an *installSnapshot, a *forward
// or an *indexResponse.
func encodeMessage(m any) ([]byte, error) {
	e := &encoder{b: make([]byte, 0, 64)}
	e.byte(codecVersion)
	switch m := m.(type) {
	case *raft.AppendEntriesRequest:
		e.byte(byte(kindAppendEntries))
		e.header(m.RPCHeader)
		e.uint(m.Term)
		e.bytes(m.Leader)
		e.uint(m.PrevLogEntry)
		e.uint(m.PrevLogTerm)
		e.uint(m.LeaderCommitIndex)
		e.uint(uint64(len(m.Entries)))
		for _, l := range m.Entries {
			if err := appendLog(e, l, true); err != nil {
				return nil, err
			}
		}
	case *raft.AppendEntriesResponse:
		e.byte(byte(kindAppendEntriesResp))
		e.header(m.RPCHeader)
		e.uint(m.Term)
		e.uint(m.LastLog)
		e.bool(m.Success)
		e.bool(m.NoRetryBackoff)
	case *raft.RequestVoteRequest:
		e.byte(byte(kindRequestVote))
		e.header(m.RPCHeader)
		e.uint(m.Term)
		e.bytes(m.Candidate)
		e.uint(m.LastLogIndex)
		e.uint(m.LastLogTerm)
		e.bool(m.LeadershipTransfer)
	case *raft.RequestVoteResponse:
		e.byte(byte(kindRequestVoteResp))
		e.header(m.RPCHeader)
		e.uint(m.Term)
		e.bool(m.Granted)
	case *raft.RequestPreVoteRequest:
		e.byte(byte(kindPreVote))
		e.header(m.RPCHeader)
		e.uint(m.Term)
		e.uint(m.LastLogIndex)
		e.uint(m.LastLogTerm)
	case *raft.RequestPreVoteResponse:
		e.byte(byte(kindPreVoteResp))
		e.header(m.RPCHeader)
		e.uint(m.Term)
		e.bool(m.Granted)
	case *installSnapshot:
		r := &m.req
		cfg, err := decodeRaftConfiguration(r.Configuration)
		if err != nil {
			return nil, fmt.Errorf("metalog: snapshot %d: %w", r.LastLogIndex, err)
		}
		e.byte(byte(kindInstallSnapshot))
		e.header(r.RPCHeader)
		e.uint(uint64(r.SnapshotVersion))
		e.uint(r.Term)
		e.bytes(r.Leader)
		e.uint(r.LastLogIndex)
		e.uint(r.LastLogTerm)
		appendConfiguration(e, cfg)
		e.uint(r.ConfigurationIndex)
		e.bytes(m.data)
	case *raft.InstallSnapshotResponse:
		e.byte(byte(kindInstallSnapshotResp))
		e.header(m.RPCHeader)
		e.uint(m.Term)
		e.bool(m.Success)
	case *raft.TimeoutNowRequest:
		e.byte(byte(kindTimeoutNow))
		e.header(m.RPCHeader)
	case *raft.TimeoutNowResponse:
		e.byte(byte(kindTimeoutNowResp))
		e.header(m.RPCHeader)
	case *forward:
		e.byte(byte(m.kind))
		e.byte(m.hops)
		switch m.kind {
		case kindPropose:
			e.bytes(m.entry)
		case kindJoin:
			e.string(m.id)
			e.string(m.addr)
		case kindRemove:
			e.string(m.id)
		default:
			return nil, fmt.Errorf("metalog: cannot forward a message of kind %d", m.kind)
		}
	case *indexResponse:
		e.byte(byte(kindIndex))
		e.uint(m.index)
	case *addressed:
		if !isRPCRequest(m.rpc) {
			return nil, fmt.Errorf("metalog: cannot address a %T", m.rpc)
		}
		inner, err := encodeMessage(m.rpc)
		if err != nil {
			return nil, err
		}
		e.byte(byte(kindAddressed))
		e.string(m.to)
		e.b = append(e.b, inner...)
	case *probe:
		e.byte(byte(kindProbe))
	case *configuration:
		e.byte(byte(kindConfiguration))
		appendConfiguration(e, m.cfg)
	default:
		return nil, fmt.Errorf("metalog: cannot encode %T", m)
	}
	return e.b, nil
}

// decodeMessage decodes what encodeMessage encoded: bytes from a peer, so
// every length is checked against what is left and every count capped.
// The message's byte slices alias b.
func decodeMessage(b []byte) (any, error) {
	d := &decoder{b: b}
	if v := d.byte("version"); d.err == nil && v != codecVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBadMessage, v, codecVersion)
	}
	k := kind(d.byte("kind"))
	if d.err != nil {
		return nil, d.err
	}
	var m any
	switch k {
	case kindAppendEntries:
		r := &raft.AppendEntriesRequest{}
		r.RPCHeader = d.header()
		r.Term = d.uint("term")
		r.Leader = d.bytes("leader", maxNameLen)
		r.PrevLogEntry = d.uint("previous entry")
		r.PrevLogTerm = d.uint("previous term")
		r.LeaderCommitIndex = d.uint("commit index")
		if n := d.count("entries", maxEntries, minLogSize); n > 0 {
			logs := make([]raft.Log, n)
			r.Entries = make([]*raft.Log, n)
			for i := range logs {
				readLog(d, &logs[i], true)
				r.Entries[i] = &logs[i]
			}
		}
		m = r
	case kindAppendEntriesResp:
		r := &raft.AppendEntriesResponse{}
		r.RPCHeader = d.header()
		r.Term = d.uint("term")
		r.LastLog = d.uint("last log")
		r.Success = d.bool("success")
		r.NoRetryBackoff = d.bool("no retry backoff")
		m = r
	case kindRequestVote:
		r := &raft.RequestVoteRequest{}
		r.RPCHeader = d.header()
		r.Term = d.uint("term")
		r.Candidate = d.bytes("candidate", maxNameLen)
		r.LastLogIndex = d.uint("last log index")
		r.LastLogTerm = d.uint("last log term")
		r.LeadershipTransfer = d.bool("leadership transfer")
		m = r
	case kindRequestVoteResp:
		r := &raft.RequestVoteResponse{}
		r.RPCHeader = d.header()
		r.Term = d.uint("term")
		r.Granted = d.bool("granted")
		m = r
	case kindPreVote:
		r := &raft.RequestPreVoteRequest{}
		r.RPCHeader = d.header()
		r.Term = d.uint("term")
		r.LastLogIndex = d.uint("last log index")
		r.LastLogTerm = d.uint("last log term")
		m = r
	case kindPreVoteResp:
		r := &raft.RequestPreVoteResponse{}
		r.RPCHeader = d.header()
		r.Term = d.uint("term")
		r.Granted = d.bool("granted")
		m = r
	case kindInstallSnapshot:
		s := &installSnapshot{}
		r := &s.req
		r.RPCHeader = d.header()
		// Version 0 snapshots carry peers in a legacy form this codec
		// does not: only version 1 is accepted.
		if v := d.uint("snapshot version"); v != 1 {
			d.fail("snapshot version")
		}
		r.SnapshotVersion = 1
		r.Term = d.uint("term")
		r.Leader = d.bytes("leader", maxNameLen)
		r.LastLogIndex = d.uint("last log index")
		r.LastLogTerm = d.uint("last log term")
		cfg := readConfiguration(d)
		r.ConfigurationIndex = d.uint("configuration index")
		s.data = d.bytes("snapshot", -1)
		if d.err == nil {
			r.Configuration = raft.EncodeConfiguration(cfg)
		}
		r.Size = int64(len(s.data))
		m = s
	case kindInstallSnapshotResp:
		r := &raft.InstallSnapshotResponse{}
		r.RPCHeader = d.header()
		r.Term = d.uint("term")
		r.Success = d.bool("success")
		m = r
	case kindTimeoutNow:
		r := &raft.TimeoutNowRequest{}
		r.RPCHeader = d.header()
		m = r
	case kindTimeoutNowResp:
		r := &raft.TimeoutNowResponse{}
		r.RPCHeader = d.header()
		m = r
	case kindPropose, kindJoin, kindRemove:
		f := &forward{kind: k}
		f.hops = d.byte("hops")
		if f.hops > maxHops {
			d.fail("hops")
		}
		switch k {
		case kindPropose:
			f.entry = d.bytes("entry", -1)
		case kindJoin:
			f.id = d.string("server id", maxNameLen)
			f.addr = d.string("server address", maxNameLen)
		case kindRemove:
			f.id = d.string("server id", maxNameLen)
		}
		m = f
	case kindIndex:
		m = &indexResponse{index: d.uint("index")}
	case kindAddressed:
		a := &addressed{to: d.string("server id", maxNameLen)}
		if d.err != nil {
			return nil, d.err
		}
		// The rest is one whole message, itself a raft RPC request (never
		// addressed again: no recursion).
		if len(d.b) < 2 || !rpcRequestKind(kind(d.b[1])) {
			return nil, fmt.Errorf("%w: an addressed message that is no raft RPC request", ErrBadMessage)
		}
		inner, err := decodeMessage(d.b)
		if err != nil {
			return nil, fmt.Errorf("%w (in an addressed message)", err)
		}
		if !isRPCRequest(inner) {
			return nil, fmt.Errorf("%w: an addressed %T", ErrBadMessage, inner)
		}
		a.rpc, d.b = inner, nil
		m = a
	case kindProbe:
		m = &probe{}
	case kindConfiguration:
		m = &configuration{cfg: readConfiguration(d)}
	default:
		return nil, fmt.Errorf("%w: kind %d", ErrBadMessage, k)
	}
	if err := d.done(); err != nil {
		return nil, fmt.Errorf("%w (kind %d)", err, k)
	}
	return m, nil
}

// isRPCRequest reports whether m is a raft RPC request this codec
// carries.
func isRPCRequest(m any) bool {
	switch m.(type) {
	case *raft.AppendEntriesRequest, *raft.RequestVoteRequest, *raft.RequestPreVoteRequest,
		*raft.TimeoutNowRequest, *installSnapshot:
		return true
	}
	return false
}

func rpcRequestKind(k kind) bool {
	switch k {
	case kindAppendEntries, kindRequestVote, kindPreVote, kindTimeoutNow, kindInstallSnapshot:
		return true
	}
	return false
}
