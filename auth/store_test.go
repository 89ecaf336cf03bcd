package auth

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/crypto/bcrypt"
)

// The store records the metadata log index its state is as of, in the
// same atomic write: reopened, it has the state and the index; a change
// that does not apply is recorded nowhere.
func TestStoreApplyAt(t *testing.T) {
	fs := vfs.NewMem()
	o := StoreOptions{FS: fs, Dir: "/d/system_auth", Cost: bcrypt.MinCost, Replicated: true}
	st, err := OpenStore(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.State().Roles()) != 0 || st.Applied() != 0 {
		t.Fatal("a replicated store starts with roles")
	}
	def, err := st.DefaultSuperuserChange()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyAt(3, def); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyAt(5, create("alice", false), Change{Op: OpGrantPermissions, Grantee: "alice", Resource: Table("ks", "t"), Permissions: Of(Select)}); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyAt(6, create("bob", false), create("alice", false)); err == nil {
		t.Fatal("a change that does not apply was accepted")
	}
	// A second default superuser is no-op once roles exist.
	if err := st.ApplyAt(7, Change{Op: OpSetupDefault, Role: "other", Set: AttrSuperuser, Superuser: true}); err != nil {
		t.Fatal(err)
	}
	again, err := OpenStore(o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Applied() != 7 || again.Legacy() {
		t.Fatalf("reopened at %d (legacy %v), want 7", again.Applied(), again.Legacy())
	}
	if got := len(again.State().Roles()); got != 2 {
		t.Fatalf("%d roles after reopen, want cassandra and alice", got)
	}
	if !UsesDefaultPassword(again.State()) {
		t.Fatal("the default superuser was lost")
	}

	// Forget, the side effect of a schema change, leaves the index as it
	// was; a keyspace takes its tables' grants with it.
	if err := again.Forget(Keyspace("ks")); err != nil {
		t.Fatal(err)
	}
	if g := again.State().Grants(nil, nil, AllPermissions); len(g) != 0 || again.Applied() != 7 {
		t.Fatalf("after Forget: %v at %d", g, again.Applied())
	}

	// A snapshot restored elsewhere gives the same state, as of its index.
	other, err := OpenStore(StoreOptions{FS: vfs.NewMem(), Dir: "/o", Cost: bcrypt.MinCost, Replicated: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.RestoreAt(9, again.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if other.Applied() != 9 || !reflect.DeepEqual(other.State().Changes(), again.State().Changes()) {
		t.Fatalf("restored at %d: %v", other.Applied(), other.State().Changes())
	}
}

// A file written before the metadata log carried roles (version 1, no
// index) still opens, marked legacy until the store writes again.
func TestStoreLegacyFile(t *testing.T) {
	s := apply(t, Empty(), create("cassandra", true), create("alice", false))
	body := binary.AppendUvarint(nil, uint64(len(s.Changes())))
	for _, c := range s.Changes() {
		body = appendBytes(body, AppendChange(nil, c))
	}
	file := append([]byte(snapshotMagic), 1)
	file = binary.BigEndian.AppendUint32(file, crc32.Checksum(body, castagnoli))
	file = append(file, body...)
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	f, _ := fs.Create("/d/roles", vfs.WriteCategoryUnspecified)
	if _, err := f.Write(file); err != nil {
		t.Fatal(err)
	}
	f.Close()
	st, err := OpenStore(StoreOptions{FS: fs, Dir: "/d", Cost: bcrypt.MinCost, Replicated: true})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Legacy() || st.Applied() != 0 || len(st.State().Roles()) != 2 {
		t.Fatalf("legacy %v applied %d roles %d", st.Legacy(), st.Applied(), len(st.State().Roles()))
	}
	if err := st.RestoreAt(4, st.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if st.Legacy() || st.Applied() != 4 {
		t.Fatalf("after the reset: legacy %v at %d", st.Legacy(), st.Applied())
	}
}

// A write that fails is ErrWrite, and the state stays as it was.
func TestStoreWriteFails(t *testing.T) {
	fs := vfs.NewMem()
	st, err := OpenStore(StoreOptions{FS: fs, Dir: "/d", Cost: bcrypt.MinCost, Replicated: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.RemoveAll("/d"); err != nil {
		t.Fatal(err)
	}
	if err := st.ApplyAt(1, create("alice", false)); !errors.Is(err, ErrWrite) {
		t.Fatalf("write to a removed directory: %v", err)
	}
	if len(st.State().Roles()) != 0 || st.Applied() != 0 {
		t.Fatal("a change that was not written is visible")
	}
}

// The cache of resolved accesses belongs to one state: a change publishes
// a new state whose answers reflect it at once.
func TestCacheInvalidatedByChange(t *testing.T) {
	st := testStore(t)
	if err := st.Submit(create("alice", false), create("team", false), Change{Op: OpGrantRole, Role: "team", Grantee: "alice"},
		Change{Op: OpGrantPermissions, Grantee: "team", Resource: Keyspace("ks"), Permissions: Of(Select)}); err != nil {
		t.Fatal(err)
	}
	old := st.State()
	if !old.Allows("alice", Select, Table("ks", "t")) {
		t.Fatal("alice does not inherit team's SELECT")
	}
	if err := st.Submit(Change{Op: OpRevokeRole, Role: "team", Grantee: "alice"}); err != nil {
		t.Fatal(err)
	}
	if st.State().Allows("alice", Select, Table("ks", "t")) {
		t.Fatal("revoked membership still allows")
	}
	if !old.Allows("alice", Select, Table("ks", "t")) {
		t.Fatal("the old state's answer changed")
	}
	off, err := OpenStore(StoreOptions{FS: vfs.NewMem(), Dir: "/x", Cost: bcrypt.MinCost, Cache: CacheOptions{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	if off.State().cache != nil || !off.State().IsSuper(DefaultSuperuser) {
		t.Fatal("cache off")
	}
	small, err := OpenStore(StoreOptions{FS: vfs.NewMem(), Dir: "/y", Cost: bcrypt.MinCost, Cache: CacheOptions{MaxEntries: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"cassandra", "a", "b"} {
		small.State().IsSuper(r)
	}
	if n := small.State().cache.n.Load(); n != 1 {
		t.Fatalf("%d entries cached, bound 1", n)
	}
}

func TestChangesRoundTrip(t *testing.T) {
	b := AppendChanges(nil, sampleChanges)
	got, err := DecodeChanges(b)
	if err != nil || !reflect.DeepEqual(got, sampleChanges) {
		t.Fatalf("%v %v", got, err)
	}
	for i := range b {
		if _, err := DecodeChanges(b[:i]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d: %v", i, err)
		}
	}
}

func FuzzDecodeChanges(f *testing.F) {
	f.Add(AppendChanges(nil, sampleChanges))
	f.Add(AppendChanges(nil, nil))
	f.Add([]byte{0x40})
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := DecodeChanges(b)
		if err != nil {
			return
		}
		again, err := DecodeChanges(AppendChanges(nil, cs))
		if err != nil || !reflect.DeepEqual(again, cs) {
			t.Fatalf("re-encoding: %v", err)
		}
	})
}

// BenchmarkAllows is one permission check of a role holding its
// permission through a granted role on a parent resource, with the cache
// and without it (roles_validity and permissions_validity 0).
func BenchmarkAllows(b *testing.B) {
	for _, off := range []bool{false, true} {
		st, err := OpenStore(StoreOptions{FS: vfs.NewMem(), Dir: "/a", Cost: bcrypt.MinCost, Cache: CacheOptions{Off: off}})
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Submit(create("reader", false), create("readers", false), Change{Op: OpGrantRole, Role: "readers", Grantee: "reader"},
			Change{Op: OpGrantPermissions, Grantee: "readers", Resource: AllKeyspaces(), Permissions: Of(Select)}); err != nil {
			b.Fatal(err)
		}
		name := "cache=on"
		if off {
			name = "cache=off"
		}
		b.Run(name, func(b *testing.B) {
			s := st.State()
			r := Table("ks", "t")
			b.ReportAllocs()
			for b.Loop() {
				if !s.Allows("reader", Select, r) {
					b.Fatal("refused")
				}
			}
		})
	}
}
