package replica

import (
	"fmt"

	"github.com/cqld/cqld/internal/wire"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// Internode encodings of the Paxos verbs, version 1 (codecV1), frozen as
// codec.go's are. A ballot is its 16 bytes; an update is mutation's
// encoding (mutation.Append) as bytes.
//
//	prepare (VerbPaxosPrepare request):
//	  version, flags (1 byte: 0x01 read), table id (16), key (bytes),
//	  ballot, slice (with 0x01)
//	promise (VerbPaxosPrepare answer):
//	  version, flags (1 byte: 0x01 promised, 0x02 accepted, 0x04
//	  committed, 0x08 data, 0x10 the accepted proposal is fast), ballot,
//	  accepted ballot and update (with 0x02), committed ballot and update
//	  (with 0x04), partition (with 0x08)
//	propose (VerbPaxosPropose request):
//	  version, flags (1 byte: 0x01 commit once accepted, 0x02 catch-up,
//	  0x04 next, 0x08 fast, 0x10 view), ballot, update, catch-up ballot
//	  and update (with 0x02), next ballot and slice (with 0x04), the
//	  view's digest (16 bytes, with 0x10, which needs 0x08; a fast
//	  proposal without it is refused)
//	acceptance (VerbPaxosPropose answer):
//	  version, accepted (1 byte, 0 or 1), ballot (the replica's promise),
//	  flags (1 byte: 0x01 next promised, 0x02 data), partition (with 0x02)
//	commit (VerbPaxosCommit request; the answer is empty):
//	  version, ballot, update
//
// Every update must be of the message's table and partition; a decoded
// partition is checked against its table as codec.go's are.

// prepareRequest is a prepare as VerbPaxosPrepare carries it.
type prepareRequest struct {
	Table  [16]byte
	Key    []byte
	Ballot Ballot
	Read   *storage.Slice
}

func appendPrepare(dst []byte, c *prepareRequest) []byte {
	var flags byte
	if c.Read != nil {
		flags |= 0x01
	}
	dst = append(dst, codecV1, flags)
	dst = append(dst, c.Table[:]...)
	dst = wire.AppendBytes(dst, c.Key)
	dst = append(dst, c.Ballot[:]...)
	if c.Read != nil {
		dst = wire.AppendSlice(dst, *c.Read)
	}
	return dst
}

// decodePrepare decodes a prepare; its slices alias b.
func decodePrepare(b []byte) (*prepareRequest, error) {
	r := newReader(b)
	r.version()
	flags := r.Byte()
	if flags&^0x01 != 0 {
		r.Fail("unknown prepare flags %#x", flags)
	}
	c := &prepareRequest{}
	copy(c.Table[:], r.Next(16))
	if c.Key = r.Bytes(); r.Err() == nil && c.Key == nil {
		r.Fail("prepare of an empty key")
	}
	c.Ballot = r.ballot()
	if flags&0x01 != 0 {
		s := r.Slice()
		c.Read = &s
	}
	return c, r.End()
}

// appendPromise appends p's encoding; its updates must encode.
func appendPromise(dst []byte, p *Promise) ([]byte, error) {
	var flags byte
	if p.OK {
		flags |= 0x01
	}
	if !p.Accepted.IsZero() {
		flags |= 0x02
	}
	if !p.Committed.IsZero() {
		flags |= 0x04
	}
	if p.Data != nil {
		flags |= 0x08
	}
	if p.Accepted.Fast {
		flags |= 0x10
	}
	dst = append(dst, codecV1, flags)
	dst = append(dst, p.Ballot[:]...)
	var err error
	for _, pr := range []Proposal{p.Accepted, p.Committed} {
		if pr.IsZero() {
			continue
		}
		if dst, err = appendProposal(dst, pr); err != nil {
			return nil, err
		}
	}
	if p.Data != nil {
		dst = appendPartition(dst, p.Data)
	}
	return dst, nil
}

// decodePromise decodes a promise for partition pk of t; its slices alias
// b.
func decodePromise(b []byte, t *storage.Table, pk []byte) (*Promise, error) {
	r := newReader(b)
	r.version()
	flags := r.Byte()
	if flags&^0x1f != 0 || flags&0x12 == 0x10 {
		r.Fail("unknown promise flags %#x", flags)
	}
	p := &Promise{OK: flags&0x01 != 0, Ballot: r.ballot()}
	if flags&0x02 != 0 {
		p.Accepted = r.proposal(lookupOne(t), pk)
		p.Accepted.Fast = flags&0x10 != 0 && !p.Accepted.IsZero()
	}
	if flags&0x04 != 0 {
		p.Committed = r.proposal(lookupOne(t), pk)
	}
	if flags&0x08 != 0 {
		if p.Data = r.partition(t); p.Data != nil && string(p.Data.Key) != string(pk) {
			r.Fail("promise with the data of another partition")
		}
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return p, nil
}

// proposeRequest is a proposal as VerbPaxosPropose carries it.
type proposeRequest struct {
	Proposal Proposal
	ProposeOptions
}

func appendPropose(dst []byte, c *proposeRequest) ([]byte, error) {
	var flags byte
	if c.Commit {
		flags |= 0x01
	}
	if !c.CatchUp.IsZero() {
		flags |= 0x02
	}
	if !c.Next.IsZero() && c.Read != nil {
		flags |= 0x04
	}
	if c.Fast {
		flags |= 0x08 | 0x10
	}
	dst = append(dst, codecV1, flags)
	dst, err := appendProposal(dst, c.Proposal)
	if err != nil {
		return nil, err
	}
	if !c.CatchUp.IsZero() {
		if dst, err = appendProposal(dst, c.CatchUp); err != nil {
			return nil, err
		}
	}
	if flags&0x04 != 0 {
		dst = append(dst, c.Next[:]...)
		dst = wire.AppendSlice(dst, *c.Read)
	}
	if flags&0x10 != 0 {
		dst = append(dst, c.View[:]...)
	}
	return dst, nil
}

// decodePropose decodes a proposal of a table tables knows; the updates
// reference b.
func decodePropose(b []byte, tables func(id [16]byte) (*storage.Table, bool)) (*proposeRequest, error) {
	r := newReader(b)
	r.version()
	flags := r.Byte()
	if flags&^0x1f != 0 || flags&0x18 == 0x10 {
		r.Fail("unknown propose flags %#x", flags)
	}
	c := &proposeRequest{}
	c.Commit, c.Fast = flags&0x01 != 0, flags&0x08 != 0
	c.Proposal = r.proposal(tables, nil)
	if flags&0x02 != 0 && r.Err() == nil {
		u := c.Proposal.Update
		c.CatchUp = r.proposal(lookupOne(u.Table), u.Key)
	}
	if flags&0x04 != 0 {
		if c.Next = r.ballot(); r.Err() == nil && c.Next.IsZero() {
			r.Fail("no next ballot")
		}
		s := r.Slice()
		c.Read = &s
	}
	if flags&0x10 != 0 {
		copy(c.View[:], r.Next(len(c.View)))
	}
	return c, r.End()
}

func appendAcceptance(dst []byte, a *Acceptance) []byte {
	dst = wire.AppendBool(append(dst, codecV1), a.OK)
	dst = append(dst, a.Promise[:]...)
	var flags byte
	if a.Next {
		flags |= 0x01
	}
	if a.Data != nil {
		flags |= 0x02
	}
	dst = append(dst, flags)
	if a.Data != nil {
		dst = appendPartition(dst, a.Data)
	}
	return dst
}

// decodeAcceptance decodes an acceptance of a proposal of partition pk of
// t; its slices alias b.
func decodeAcceptance(b []byte, t *storage.Table, pk []byte) (*Acceptance, error) {
	r := newReader(b)
	r.version()
	a := &Acceptance{OK: r.Bool(), Promise: r.ballot()}
	flags := r.Byte()
	if flags&^0x03 != 0 {
		r.Fail("unknown acceptance flags %#x", flags)
	}
	a.Next = flags&0x01 != 0
	if flags&0x02 != 0 {
		if a.Data = r.partition(t); a.Data != nil && string(a.Data.Key) != string(pk) {
			r.Fail("acceptance with the data of another partition")
		}
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return a, nil
}

func appendCommit(dst []byte, p Proposal) ([]byte, error) {
	return appendProposal(append(dst, codecV1), p)
}

// decodeCommit decodes a commit of a table tables knows; its update
// references b.
func decodeCommit(b []byte, tables func(id [16]byte) (*storage.Table, bool)) (Proposal, error) {
	r := newReader(b)
	r.version()
	p := r.proposal(tables, nil)
	return p, r.End()
}

// appendProposal appends a ballot and an update.
func appendProposal(dst []byte, p Proposal) ([]byte, error) {
	dst = append(dst, p.Ballot[:]...)
	enc, err := mutation.Append(nil, p.Update)
	if err != nil {
		return nil, err
	}
	return wire.AppendBytes(dst, enc), nil
}

func (r *reader) ballot() Ballot {
	var b Ballot
	copy(b[:], r.Next(len(b)))
	return b
}

// proposal reads a ballot and an update of a table tables knows, of
// partition pk when pk is not nil. A ballot must be set.
func (r *reader) proposal(tables func(id [16]byte) (*storage.Table, bool), pk []byte) Proposal {
	p := Proposal{Ballot: r.ballot()}
	enc := r.Bytes()
	if r.Err() != nil {
		return Proposal{}
	}
	if p.Ballot.IsZero() {
		r.Fail("a proposal without a ballot")
		return Proposal{}
	}
	var missing *UnknownTableError
	lookup := func(id [16]byte) (*storage.Table, bool) {
		t, ok := tables(id)
		if !ok && missing == nil {
			missing = &UnknownTableError{ID: id}
		}
		return t, ok
	}
	u, rest, err := mutation.Decode(enc, lookup)
	switch {
	case missing != nil:
		r.SetErr(missing)
	case err != nil:
		r.SetErr(fmt.Errorf("%w: %w", ErrBadMessage, err))
	case len(rest) != 0:
		r.Fail("%d bytes after a proposal's update", len(rest))
	case len(u.Key) == 0:
		r.Fail("a proposal of an empty key")
	case pk != nil && string(u.Key) != string(pk):
		r.Fail("a proposal of another partition")
	default:
		p.Update = u
		return p
	}
	return Proposal{}
}

// lookupOne is a table lookup that knows t alone.
func lookupOne(t *storage.Table) func(id [16]byte) (*storage.Table, bool) {
	return func(id [16]byte) (*storage.Table, bool) { return t, t != nil && id == t.Def.ID }
}
