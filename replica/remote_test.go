package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/datastax/go-cassandra-native-protocol/datatype"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// twoNodes is a coordinator node a and a replica node b over an
// InmemNetwork, each with a real Local on disk and serving it: remote is
// b as a reaches it.
type twoNodes struct {
	net    *messaging.InmemNetwork
	a, b   *messaging.InmemTransport
	la, lb *Local
	remote *Remote
	tbl    *storage.Table
}

func newTwoNodes(t testing.TB, opts RemoteOptions) *twoNodes {
	t.Helper()
	n := &twoNodes{net: messaging.NewInmemNetwork(), tbl: testTable(t, [16]byte{9})}
	tables := func(id [16]byte) (*storage.Table, bool) { return n.tbl, id == n.tbl.Def.ID }
	var trs []*messaging.InmemTransport
	var locals []*Local
	for i := range 2 {
		tr, err := n.net.NewTransport(messaging.Options{
			ClusterName: "test", HostID: [16]byte{byte(i + 1)},
			Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, byte(i + 1)}), 7000),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		l := openLocalOn(t, vfs.Default, t.TempDir(), "batch")
		Serve(tr, l, tables, nil)
		trs, locals = append(trs, tr), append(locals, l)
	}
	n.a, n.b, n.la, n.lb = trs[0], trs[1], locals[0], locals[1]
	n.remote = NewRemote(n.a, n.b.Addr(), opts)
	t.Cleanup(n.remote.Close)
	return n
}

// writeV writes v to row (k, c) of tbl in m.
func writeV(m *mutation.Mutation, tbl *storage.Table, k, c int, v string, ts int64) {
	m.WriteCell(tbl, i32(k), storage.CellTarget{Clustering: [][]byte{i32(c)}, Column: "v"}, storage.Cell{Timestamp: ts, Value: []byte(v)})
}

func TestRemoteWritesAndReads(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	ctx := context.Background()

	// Written through the Remote, read on b's Local.
	m := mutation.New()
	for c := range 3 {
		writeV(m, n.tbl, 1, c, fmt.Sprint("r", c), 10)
	}
	if err := n.remote.Apply(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	m.Release()
	if got := rows(t, n.lb, n.tbl, 1); !reflect.DeepEqual(got, map[int]string{0: "r0", 1: "r1", 2: "r2"}) {
		t.Fatalf("b's partition 1 after a remote write: %v", got)
	}

	// A failing check sends nothing.
	m = mutation.New()
	m.DeletePartition(n.tbl, i32(1), storage.Cell{Timestamp: 20, Tombstone: true, LocalDeletionTime: 1})
	stale := errors.New("stale")
	if err := n.remote.Apply(ctx, m, func() error { return stale }); !errors.Is(err, stale) {
		t.Fatalf("Apply with a failing check: %v", err)
	}
	if got := rows(t, n.lb, n.tbl, 1); len(got) != 3 {
		t.Fatalf("b's partition 1 after a refused delete: %v", got)
	}
	// ApplyAsync is pending, then answered.
	done := make(chan error, 1)
	pending, err := n.remote.ApplyAsync(m, nil, func(err error) { done <- err })
	m.Release()
	if !pending || err != nil || !n.remote.ApplyWaits() {
		t.Fatalf("ApplyAsync: pending %v, err %v", pending, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := rows(t, n.lb, n.tbl, 1); len(got) != 0 {
		t.Fatalf("b's partition 1 after an async delete: %v", got)
	}

	// Written on b's Local, read through the Remote, resolved on a.
	m = mutation.New()
	writeV(m, n.tbl, 2, 5, "local", 30)
	writeV(m, n.tbl, 2, 6, "other", 30)
	if err := n.lb.Apply(ctx, m, nil); err != nil {
		t.Fatal(err)
	}
	m.Release()
	var got []string
	slice := storage.Slice{Start: &storage.Bound{Prefix: [][]byte{i32(6)}, Inclusive: true}}
	err = n.remote.ReadPartition(ctx, n.tbl, i32(2), storage.ReadOptions{Slice: slice, Now: 1}, func(r *storage.Row) bool {
		got = append(got, string(r.Cells[0].Cell.Value))
		return true
	})
	if err != nil || !reflect.DeepEqual(got, []string{"other"}) {
		t.Fatalf("remote read of a slice: %v, %v", got, err)
	}
	p, err := n.remote.Read(ctx, n.tbl, i32(1), storage.Slice{})
	if err != nil || len(p.KVs) != 4 {
		t.Fatalf("remote unresolved read of a deleted partition: %v, %v", p, err)
	}
	for _, k := range []int{1, 2, 3} {
		want, err := n.lb.Digest(ctx, n.tbl, i32(k), storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		if d, err := n.remote.Digest(ctx, n.tbl, i32(k), storage.Slice{}); err != nil || d != want {
			t.Fatalf("partition %d: remote digest %x, %v; local %x", k, d, err, want)
		}
	}

	// Counters add up on the replica, and m holds the totals written.
	tg := storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}
	for i := range 3 {
		m = mutation.New()
		m.AddCounter(n.tbl, i32(9), tg, 5, int64(100+i))
		if err := n.remote.Apply(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
		op := m.Updates[0].Ops[0]
		if op.Kind != mutation.KindCell || binary.BigEndian.Uint64(op.Cell.Value) != uint64(5*(i+1)) {
			t.Fatalf("counter write %d applied as %+v", i, op)
		}
		m.Release()
	}

	if err := n.remote.ScanIndex(ctx, n.tbl, "ix", []byte("v"), storage.ScanOptions{}, nil); !errors.Is(err, ErrBadMessage) {
		t.Fatalf("remote ScanIndex of an unknown index: %v", err)
	}
	if err := n.remote.Truncate(ctx, n.tbl); err != nil {
		t.Fatal(err)
	}
	if got := rows(t, n.lb, n.tbl, 2); len(got) != 0 {
		t.Fatalf("b's partition 2 after a remote truncate: %v", got)
	}
}

// Range reads through a Remote page as the Local they read does, over
// many partitions and ranges that wrap; Scan through small pages passes
// the same rows as Scan on the Local, for each of its options.
func TestRemoteRangeReads(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{PagePartitions: 7, PageBytes: 1 << 10})
	const count = 400
	writePartitions(t, n.lb, n.tbl, count)
	m := mutation.New()
	for k := 0; k < count; k += 5 {
		writeV(m, n.tbl, k, 1, "hit", 2)
	}
	if err := n.lb.Apply(context.Background(), m, nil); err != nil {
		t.Fatal(err)
	}
	m.Release()
	rng := rand.New(rand.NewPCG(4, 5))
	tok := func() int64 { return storage.Token(i32(rng.IntN(count))) }
	ranges := []storage.TokenRange{{Start: storage.MinToken, End: storage.MinToken}, {Start: 0, End: 0}}
	for range 6 {
		ranges = append(ranges, storage.TokenRange{Start: tok(), End: tok()}, storage.TokenRange{Start: rng.Int64(), End: rng.Int64()})
	}
	for _, r := range ranges {
		want := readAll(t, n.lb, n.tbl, RangeCommand{Range: r})
		for _, c := range []RangeCommand{{Range: r}, {Range: r, MaxPartitions: 9}, {Range: r, MaxBytes: 300}} {
			if got := readAll(t, n.remote, n.tbl, c); !reflect.DeepEqual(got, want) {
				t.Fatalf("%+v through the remote: %d partitions, want %d", c, len(got), len(want))
			}
		}
		hits := &storage.IndexQuery{Name: "v_idx", Value: []byte("hit")}
		want = readAll(t, n.lb, n.tbl, RangeCommand{Range: r, Index: hits})
		if got := readAll(t, n.remote, n.tbl, RangeCommand{Range: r, Index: hits, MaxPartitions: 3}); !reflect.DeepEqual(got, want) || len(want) > count/5 {
			t.Fatalf("%+v through the index and the remote: %d partitions, want %d", r, len(got), len(want))
		}
	}
	render := func(r Replica, o storage.ScanOptions) []string {
		var out []string
		err := r.Scan(context.Background(), n.tbl, o, func(pk []byte, row *storage.Row) bool {
			out = append(out, fmt.Sprintf("%x/%x", pk, row.Clustering))
			return len(out) < 350
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	renderIndex := func(r Replica, o storage.ScanOptions) []string {
		var out []string
		err := r.ScanIndex(context.Background(), n.tbl, "v_idx", []byte("hit"), o, func(pk []byte, row *storage.Row) bool {
			if string(row.Cells[0].Cell.Value) == "hit" {
				out = append(out, fmt.Sprintf("%x/%x", pk, row.Clustering))
			}
			return len(out) < 50
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	lo, hi := tok(), tok()
	if lo > hi {
		lo, hi = hi, lo
	}
	for _, o := range []storage.ScanOptions{
		{Now: 1},
		{MinToken: &lo},
		{MaxToken: &hi},
		{MinToken: &lo, MaxToken: &hi},
		{MinToken: &hi, MaxToken: &lo},
		{FromPartition: i32(17)},
		{FromPartition: i32(17), MinToken: &lo, MaxToken: &hi},
	} {
		want := render(n.lb, o)
		if got := render(n.remote, o); !reflect.DeepEqual(got, want) {
			t.Fatalf("scan %+v through the remote: %d rows, want %d", o, len(got), len(want))
		}
		want = renderIndex(n.lb, o)
		if got := renderIndex(n.remote, o); !reflect.DeepEqual(got, want) || len(want) == 0 && o.MinToken == nil {
			t.Fatalf("index scan %+v through the remote: %d rows, want %d", o, len(got), len(want))
		}
	}
}

// A table the replica does not know is an error the coordinator can see,
// naming the table, on every verb.
func TestRemoteUnknownTable(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	ctx := context.Background()
	other := testTable(t, [16]byte{7, 7})
	m := mutation.New()
	defer m.Release()
	m.WriteCell(n.tbl, i32(1), storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, storage.Cell{Timestamp: 1, Value: []byte("x")})
	m.WriteCell(other, i32(1), storage.CellTarget{Clustering: [][]byte{i32(0)}, Column: "v"}, storage.Cell{Timestamp: 1, Value: []byte("x")})
	_, _, rangeErr := n.remote.ReadRange(ctx, other, RangeCommand{Range: storage.TokenRange{Start: 0, End: 0}})
	_, readErr := n.remote.Read(ctx, other, i32(1), storage.Slice{})
	for name, err := range map[string]error{
		"mutation": n.remote.Apply(ctx, m, nil),
		"read":     readErr,
		"range":    rangeErr,
		"truncate": n.remote.Truncate(ctx, other),
	} {
		ute, ok := errors.AsType[*UnknownTableError](err)
		if !ok || !errors.Is(err, ErrUnknownTable) || ute.ID != other.Def.ID {
			t.Errorf("%s of an unknown table: %v", name, err)
		}
	}
	if got := rows(t, n.lb, n.tbl, 1); len(got) != 0 {
		t.Fatalf("a mutation naming an unknown table applied in part: %v", got)
	}
}

// A cut or partitioned link fails the request with messaging's error, by
// the request's deadline.
func TestRemoteCutLink(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	n.net.Partition([]netip.AddrPort{n.a.Addr()}, []netip.AddrPort{n.b.Addr()})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := n.remote.Read(ctx, n.tbl, i32(1), storage.Slice{}); !errors.Is(err, messaging.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read across a partition: %v", err)
	}
	n.net.Heal()
	n.net.Disconnect(n.a.Addr(), n.b.Addr())
	m := mutation.New()
	defer m.Release()
	writeV(m, n.tbl, 1, 0, "x", 1)
	if err := n.remote.Apply(context.Background(), m, nil); !errors.Is(err, messaging.ErrUnreachable) {
		t.Fatalf("write over a cut link: %v", err)
	}
	done := make(chan error, 1)
	if pending, err := n.remote.ApplyAsync(m, nil, func(err error) { done <- err }); !pending || err != nil {
		t.Fatalf("ApplyAsync over a cut link: %v %v", pending, err)
	}
	if err := <-done; !errors.Is(err, messaging.ErrUnreachable) {
		t.Fatalf("async write over a cut link: %v", err)
	}
}

// Garbage on every verb answers a failure, never a panic, and the server
// goes on serving.
func TestServeGarbage(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(8, 9))
	good := map[messaging.Verb][]byte{
		messaging.VerbRead:      AppendReadCommand(nil, &ReadCommand{Table: n.tbl.Def.ID, Key: i32(1), Slice: storage.Slice{Start: &storage.Bound{Prefix: [][]byte{i32(1)}}}}),
		messaging.VerbRangeRead: appendRangeRequest(nil, &rangeRequest{Table: n.tbl.Def.ID, RangeCommand: RangeCommand{After: i32(3), MaxPartitions: 2}}),
		messaging.VerbTruncate:  append([]byte{codecV1}, n.tbl.Def.ID[:]...),
	}
	m := mutation.New()
	writeV(m, n.tbl, 1, 0, "x", 1)
	var err error
	if good[messaging.VerbMutation], err = appendMutation(nil, m); err != nil {
		t.Fatal(err)
	}
	m.Release()
	for verb, payload := range good {
		if _, err := n.a.Request(ctx, n.b.Addr(), verb, payload); err != nil {
			t.Fatalf("%s: a good request fails: %v", verb, err)
		}
		inputs := [][]byte{nil, {}, {codecV1}, {2}, append(payload, 0)}
		for i := range payload {
			inputs = append(inputs, payload[:i])
			flipped := append([]byte(nil), payload...)
			flipped[i] ^= byte(1 + rng.IntN(255))
			inputs = append(inputs, flipped)
		}
		for range 50 {
			b := make([]byte, rng.IntN(64))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			inputs = append(inputs, b)
		}
		for _, in := range inputs {
			// A flipped byte may still make a valid request; only a
			// failure's form is checked.
			if _, err := n.a.Request(ctx, n.b.Addr(), verb, in); err != nil {
				if _, ok := errors.AsType[*messaging.RemoteError](err); !ok {
					t.Fatalf("%s with %x: %v, want a failure response", verb, in, err)
				}
			}
		}
	}
	if _, err := n.remote.Read(ctx, n.tbl, i32(1), storage.Slice{}); err != nil {
		t.Fatalf("after garbage, a read fails: %v", err)
	}
}

// Read repair's writes bring a replica up to date: for random
// partitions, the writes Repair makes from one replica's answer, sent
// through a Remote to an empty replica, read back as the same keys and
// cells; and from the reconciled answer of two replicas and one of them,
// bring that one to the reconciled partition.
func TestRepairThroughRemote(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	ctx := context.Background()
	for seed := range uint64(15) {
		rng := rand.New(rand.NewPCG(seed, 11))
		pk := i32(int(seed))
		for _, l := range []*Local{n.la, n.lb} {
			m := mutation.New()
			for range 30 {
				randomOp(rng, m, n.tbl, pk)
			}
			if err := l.Apply(ctx, m, nil); err != nil {
				t.Fatal(err)
			}
			m.Release()
		}
		pa, err := n.la.Read(ctx, n.tbl, pk, storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		pb, err := n.lb.Read(ctx, n.tbl, pk, storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := storage.ReconcilePartitions(pa, pb)
		if err != nil {
			t.Fatal(err)
		}
		m := mutation.New()
		if err := m.Repair(n.tbl, want, pb); err != nil {
			t.Fatal(err)
		}
		if err := n.remote.Apply(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
		m.Release()
		if got, _ := n.lb.Read(ctx, n.tbl, pk, storage.Slice{}); !reflect.DeepEqual(got.KVs, want.KVs) {
			t.Fatalf("seed %d: repaired from the difference, b holds\n%x\nwant\n%x", seed, got.KVs, want.KVs)
		}

		// The whole of a partition only a holds.
		only := i32(1000 + int(seed))
		m = mutation.New()
		for range 30 {
			randomOp(rng, m, n.tbl, only)
		}
		if err := n.la.Apply(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
		m.Release()
		moved, err := n.la.Read(ctx, n.tbl, only, storage.Slice{})
		if err != nil {
			t.Fatal(err)
		}
		m = mutation.New()
		if err := m.Repair(n.tbl, moved, nil); err != nil {
			t.Fatal(err)
		}
		if err := n.remote.Apply(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
		m.Release()
		if got, _ := n.lb.Read(ctx, n.tbl, only, storage.Slice{}); !reflect.DeepEqual(got.KVs, moved.KVs) {
			t.Fatalf("seed %d: repaired whole, b holds\n%x\nwant\n%x", seed, got.KVs, moved.KVs)
		}
	}
}

// randomOp adds one random write of any kind to partition pk of m:
// regular, static and collection cells, live, expiring or deleted, row
// markers and deletions, range and partition deletions.
func randomOp(rng *rand.Rand, m *mutation.Mutation, tbl *storage.Table, pk []byte) {
	ck := [][]byte{i32(rng.IntN(6))}
	ts := int64(rng.IntN(20))
	cell := storage.Cell{Timestamp: ts, Value: []byte{byte('a' + rng.IntN(26))}}
	switch rng.IntN(4) {
	case 0:
		cell = storage.Cell{Timestamp: ts, Tombstone: true, LocalDeletionTime: 50}
	case 1:
		cell.TTL, cell.LocalDeletionTime = 60, int32(100+rng.IntN(10))
	}
	dead := storage.Cell{Timestamp: ts, Tombstone: true, LocalDeletionTime: 50}
	switch rng.IntN(9) {
	case 0, 1:
		m.WriteCell(tbl, pk, storage.CellTarget{Clustering: ck, Column: "v"}, cell)
	case 2:
		m.WriteCell(tbl, pk, storage.CellTarget{Static: true, Column: "s"}, cell)
	case 3:
		m.WriteCell(tbl, pk, storage.CellTarget{Clustering: ck, Column: "m", PathType: datatype.Int, Path: i32(rng.IntN(4))}, cell)
	case 4:
		m.DeleteCollection(tbl, pk, storage.CellTarget{Clustering: ck, Column: "m"}, dead)
	case 5:
		m.WriteRowMarker(tbl, pk, ck, storage.Cell{Timestamp: ts, TTL: cell.TTL, LocalDeletionTime: cell.LocalDeletionTime})
	case 6:
		m.DeleteRow(tbl, pk, ck, dead)
	case 7:
		s := storage.Slice{Start: &storage.Bound{Prefix: ck, Inclusive: rng.IntN(2) == 0}}
		if rng.IntN(2) == 0 {
			s.Start = nil
			s.End = &storage.Bound{Prefix: ck, Inclusive: true}
		}
		m.DeleteRange(tbl, pk, s, dead)
	default:
		if rng.IntN(3) == 0 {
			m.DeletePartition(tbl, pk, dead)
		}
	}
}

// The asynchronous calls answer as their blocking twins do: a write in
// its encoding is applied, a read is the peer's partition and a digest
// its digest; a cut link fails them.
func TestRemoteAsync(t *testing.T) {
	n := newTwoNodes(t, RemoteOptions{})
	ctx := context.Background()
	m := &mutation.Mutation{}
	writeV(m, n.tbl, 1, 0, "async", 10)
	var updates []byte
	for _, u := range m.Updates {
		var err error
		if updates, err = mutation.Append(updates, u); err != nil {
			t.Fatal(err)
		}
	}
	errc := make(chan error, 1)
	n.remote.ApplyEncodedAsync(ctx, AppendEncodedMutation(nil, len(m.Updates), updates), func(err error) { errc <- err })
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	want, err := n.lb.Read(ctx, n.tbl, i32(1), storage.Slice{})
	if err != nil || len(want.KVs) == 0 {
		t.Fatalf("the write did not land: %v", err)
	}
	parts := make(chan *storage.Partition, 1)
	n.remote.ReadAsync(ctx, n.tbl, i32(1), storage.Slice{}, func(p *storage.Partition, err error) {
		if err != nil {
			t.Error(err)
		}
		parts <- p
	})
	if got := <-parts; got == nil || !reflect.DeepEqual(got.KVs, want.KVs) {
		t.Fatalf("ReadAsync answered %+v", got)
	}
	digests := make(chan storage.Digest, 1)
	n.remote.DigestAsync(ctx, n.tbl, i32(1), storage.Slice{}, func(d storage.Digest, err error) {
		if err != nil {
			t.Error(err)
		}
		digests <- d
	})
	if got := <-digests; got != storage.PartitionDigest(want) {
		t.Fatal("DigestAsync answered another digest")
	}
	n.net.Disconnect(n.a.Addr(), n.b.Addr())
	n.remote.DigestAsync(ctx, n.tbl, i32(1), storage.Slice{}, func(_ storage.Digest, err error) { errc <- err })
	if err := <-errc; !errors.Is(err, messaging.ErrUnreachable) {
		t.Fatalf("over a cut link: %v", err)
	}
}
