package replica

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
	"github.com/cqld/cqld/systables"
)

// The replica's Paxos state lives in a real table of the engine,
// system.paxos, with Cassandra 4.0's layout (package systables defines it
// and serves it to SELECTs, as a table stored in the engine):
//
//	CREATE TABLE system.paxos (
//	    row_key blob, cf_id uuid,
//	    in_progress_ballot timeuuid,
//	    proposal blob, proposal_ballot timeuuid, proposal_version int,
//	    most_recent_commit blob, most_recent_commit_at timeuuid,
//	    most_recent_commit_version int,
//	    PRIMARY KEY ((row_key), cf_id))
//
// row_key is the partition key, cf_id the table id. proposal and
// most_recent_commit hold a mutation.Update in its codec's encoding, whose
// version the _version columns record (1). As in Cassandra, each state
// change writes its cells with its ballot's timestamp and a TTL of the
// table's gc_grace_seconds, at least three hours: cells of a newer ballot
// win over older ones whatever order they arrive in, a commit's null
// proposal (tombstones at its ballot) clears exactly the proposals at or
// before it, and the state of a partition no transaction has touched for
// that long expires (paxosTTL says why that is safe).
const (
	colInProgress    = "in_progress_ballot"
	colProposal      = "proposal"
	colProposalAt    = "proposal_ballot"
	colProposalVer   = "proposal_version"
	colCommit        = "most_recent_commit"
	colCommitAt      = "most_recent_commit_at"
	colCommitVersion = "most_recent_commit_version"

	// proposalVersion is the encoding of the stored updates: mutation's
	// codec, version 1; fastProposalVersion the same for a proposal made
	// on a promise given in advance (Proposal.Fast), cqld's own.
	proposalVersion     = 1
	fastProposalVersion = 2
)

// paxosTable is system.paxos, as the system keyspaces define it.
var paxosTable = systables.Lookup("system", "paxos").Storage

// minPaxosTTL is the shortest life of a partition's Paxos state, as
// Cassandra's (SystemKeyspace.paxosTtlSec: three hours, or the table's
// gc_grace_seconds when longer).
const minPaxosTTL = 3 * 3600

// paxosTTL is how long t's Paxos state lives after its last change. State
// that expires is a promise, an acceptance or a commit older than any
// transaction can still be running with (a proposer gives up after its
// request's timeout, seconds), so forgetting it lets no older ballot
// through; a commit that old has reached its replicas or is in their
// hints, within max_hint_window (three hours by default).
func paxosTTL(t *storage.Table) int32 {
	return max(minPaxosTTL, t.Def.Options.GCGraceSeconds)
}

// paxosRow is the clustering of t's row in system.paxos.
func paxosRow(t *storage.Table) [][]byte { return [][]byte{t.Def.ID[:]} }

// loadPaxos returns partition pk of t's Paxos state as of now: from the
// cache (paxos_cache.go) when it holds the partition, else read from
// system.paxos and cached. REQUIRES: the partition locked.
func (l *Local) loadPaxos(t *storage.Table, pk []byte, now int32) (PaxosState, error) {
	if st, ok := l.paxosCache.get(t, pk, now); ok {
		return st, nil
	}
	gen := l.paxosCache.generation()
	cells, bound, err := l.readPaxos(t, pk, now)
	if err != nil {
		return PaxosState{}, err
	}
	if bound.ok {
		l.paxosCache.add(t, pk, gen, cells, bound.ts)
	}
	return cells.state(t, now), nil
}

// paxosBound is the highest timestamp of anything a partition's
// system.paxos row holds; not ok when a key's cell did not decode.
type paxosBound struct {
	ts int64
	ok bool
}

// readPaxos reads partition pk of t's system.paxos row: its live cells as
// of now, and the bound of everything it holds, live or not.
func (l *Local) readPaxos(t *storage.Table, pk []byte, now int32) (paxosCells, paxosBound, error) {
	var cells paxosCells
	bound := paxosBound{ts: minCellTimestamp, ok: true}
	ck := paxosRow(t)
	slice := storage.Slice{Start: &storage.Bound{Prefix: ck, Inclusive: true}, End: &storage.Bound{Prefix: ck, Inclusive: true}}
	p, err := l.engine.ReadRaw(paxosTable, pk, slice)
	if err == nil {
		for _, kv := range p.KVs {
			c, err := storage.DecodeCell(kv.Value)
			bound = paxosBound{ts: max(bound.ts, c.Timestamp), ok: bound.ok && err == nil}
		}
		err = paxosTable.Resolve(p, storage.ReadOptions{Now: now, Slice: slice}, func(r *storage.Row) bool {
			for _, c := range r.Cells {
				if i := paxosColumn(c.Column); i >= 0 && c.Path == nil {
					c.Cell.Value = bytes.Clone(c.Cell.Value)
					cells.cell[i], cells.has[i] = c.Cell, true
				}
			}
			return true
		})
	}
	if err != nil {
		return cells, bound, fmt.Errorf("replica: paxos state of %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
	}
	return cells, bound, nil
}

// minCellTimestamp is before every cell's timestamp.
const minCellTimestamp = -1 << 63

// state is the Paxos state c holds as of now, for t. A stored update that
// does not decode for t any more (a column dropped since) is no proposal:
// it can no longer be applied.
func (c *paxosCells) state(t *storage.Table, now int32) PaxosState {
	var st PaxosState
	var proposal, commit []byte
	var fast bool
	for i, col := range paxosColumns {
		if !c.has[i] || !c.cell[i].IsLive(now) {
			continue
		}
		switch v := c.cell[i].Value; col {
		case colInProgress:
			copy(st.Promised[:], v)
		case colProposalAt:
			copy(st.Accepted.Ballot[:], v)
		case colProposal:
			proposal = bytes.Clone(v)
		case colCommitAt:
			copy(st.Committed.Ballot[:], v)
		case colCommit:
			commit = bytes.Clone(v)
		case colProposalVer:
			fast = len(v) == 4 && binary.BigEndian.Uint32(v) == fastProposalVersion
		}
	}
	st.Accepted = decodeStored(t, st.Accepted.Ballot, proposal)
	st.Accepted.Fast = fast && !st.Accepted.IsZero()
	st.Committed = decodeStored(t, st.Committed.Ballot, commit)
	return st
}

// decodeStored is the proposal of ballot b whose update is stored as
// enc, none when either is missing or enc is not an update of t.
func decodeStored(t *storage.Table, b Ballot, enc []byte) Proposal {
	if b.IsZero() || enc == nil {
		return Proposal{}
	}
	u, rest, err := mutation.Decode(enc, func(id [16]byte) (*storage.Table, bool) { return t, id == t.Def.ID })
	if err != nil || len(rest) != 0 || string(u.Key) == "" {
		return Proposal{}
	}
	return Proposal{Ballot: b, Update: u}
}

// paxosWriter writes state changes of one partition into a storage
// mutation, each cell at its ballot's timestamp.
type paxosWriter struct {
	sm  *storage.Mutation
	t   *storage.Table
	pk  []byte
	now int32
	ttl int32
	// noProposal: the partition is known to hold no proposal, which a
	// commit need not clear.
	noProposal bool
	// wrote are the cells written, for the cache (Local.paxosApplied).
	wrote []paxosWrite
}

func (l *Local) paxosWriter(sm *storage.Mutation, t *storage.Table, pk []byte, now int32) *paxosWriter {
	return &paxosWriter{sm: sm, t: t, pk: pk, now: now, ttl: paxosTTL(t)}
}

func (w *paxosWriter) cell(b Ballot, col string, v []byte) error {
	return w.write(col, storage.Cell{Timestamp: b.Micros(), TTL: w.ttl, LocalDeletionTime: w.now + w.ttl, Value: v})
}

func (w *paxosWriter) null(b Ballot, col string) error {
	return w.write(col, storage.Cell{Timestamp: b.Micros(), Tombstone: true, LocalDeletionTime: w.now})
}

func (w *paxosWriter) write(col string, c storage.Cell) error {
	w.wrote = append(w.wrote, paxosWrite{col: paxosColumn(col), cell: c})
	return w.sm.WriteCell(paxosTable, w.pk, storage.CellTarget{Clustering: paxosRow(w.t), Column: col}, c)
}

// paxosApplied tells the cache of w's writes once applied, err the
// application's error.
func (l *Local) paxosApplied(w *paxosWriter, err error) error {
	l.paxosCache.wrote(w.t, w.pk, w.wrote, w.now, err != nil)
	return err
}

// promise records the promise of b.
func (w *paxosWriter) promise(b Ballot) error { return w.cell(b, colInProgress, b[:]) }

// accept records the acceptance of p (and so the promise of its ballot).
func (w *paxosWriter) accept(p Proposal) error {
	enc, err := mutation.Append(nil, p.Update)
	if err != nil {
		return err
	}
	version := uint32(proposalVersion)
	if p.Fast {
		version = fastProposalVersion
	}
	for _, err := range []error{
		w.promise(p.Ballot),
		w.cell(p.Ballot, colProposalAt, p.Ballot[:]),
		w.cell(p.Ballot, colProposal, enc),
		w.cell(p.Ballot, colProposalVer, binary.BigEndian.AppendUint32(nil, version)),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// commit records the commit of p and clears the proposals at or before
// it.
func (w *paxosWriter) commit(p Proposal) error {
	enc, err := mutation.Append(nil, p.Update)
	if err != nil {
		return err
	}
	if !w.noProposal {
		if err := w.clearProposal(p.Ballot); err != nil {
			return err
		}
	}
	for _, err := range []error{
		w.cell(p.Ballot, colCommitAt, p.Ballot[:]),
		w.cell(p.Ballot, colCommit, enc),
		w.cell(p.Ballot, colCommitVersion, binary.BigEndian.AppendUint32(nil, proposalVersion)),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// nowSeconds is l's clock in seconds.
func (l *Local) nowSeconds() int32 { return int32(l.now().Unix()) }

// dropPaxos deletes the Paxos state of every partition of t, as of now.
func (l *Local) dropPaxos(t *storage.Table) error {
	// The deletion changes the rows without the partitions' locks: the
	// cache drops the table's entries once it is applied (or failed).
	defer l.paxosCache.dropTable(t.Def.ID)
	now := l.now()
	var keys [][]byte
	err := l.engine.Scan(paxosTable, storage.ScanOptions{Now: int32(now.Unix())}, func(pk []byte, r *storage.Row) bool {
		if len(r.Clustering) == 1 && bytes.Equal(r.Clustering[0], t.Def.ID[:]) {
			keys = append(keys, bytes.Clone(pk))
		}
		return true
	})
	if err != nil || len(keys) == 0 {
		return err
	}
	sm := l.engine.NewMutation()
	dead := storage.Cell{Timestamp: now.UnixMicro(), Tombstone: true, LocalDeletionTime: int32(now.Unix())}
	for _, pk := range keys {
		if err := sm.DeleteRow(paxosTable, pk, paxosRow(t), dead); err != nil {
			return discard(sm, err)
		}
	}
	return l.engine.Apply(sm)
}

// clearProposal clears the proposals at or before b.
func (w *paxosWriter) clearProposal(b Ballot) error {
	for _, col := range []string{colProposalAt, colProposal, colProposalVer} {
		if err := w.null(b, col); err != nil {
			return err
		}
	}
	return nil
}
