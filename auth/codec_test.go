package auth

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

var sampleChanges = []Change{
	{Op: OpCreateRole, Role: "cassandra", Set: AttrPassword | AttrLogin | AttrSuperuser, SaltedHash: []byte("$2a$04$abc"), Login: true, Superuser: true, IfExists: true},
	{Op: OpAlterRole, Role: "r", Set: AttrOptions, Options: map[string]string{"a": "1", "b": ""}},
	{Op: OpDropRole, Role: "r", IfExists: true},
	{Op: OpGrantPermissions, Grantee: "r", Resource: Table("ks", "t"), Permissions: Of(Select, Modify)},
	{Op: OpRevokePermissions, Grantee: "r", Resource: RoleResource("x/y"), Permissions: AllPermissions},
	{Op: OpGrantRole, Role: "a", Grantee: "b"},
	{Op: OpRevokeRole, Role: "a", Grantee: "b"},
	{Op: OpDropResource, Resource: Keyspace("ks")},
	{Op: OpGrantPermissions, Grantee: "r", Resource: AllFunctions(), Permissions: Of(Execute)},
	{Op: OpRevokePermissions, Grantee: "r", Resource: KeyspaceFunctions("ks"), Permissions: Of(Create, Execute)},
	{Op: OpSetupDefault, Role: "cassandra", Set: AttrPassword | AttrLogin | AttrSuperuser, SaltedHash: []byte("$2a$04$abc"), Login: true, Superuser: true},
}

func TestChangeRoundTrip(t *testing.T) {
	for _, c := range sampleChanges {
		b := AppendChange(nil, c)
		got, err := DecodeChange(b)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, c)
		}
		for i := range b {
			if _, err := DecodeChange(b[:i]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%+v cut at %d: %v", c, i, err)
			}
		}
	}
}

func TestSnapshotCorrupt(t *testing.T) {
	s := apply(t, Empty(), create("a", true), Change{Op: OpGrantPermissions, Grantee: "a", Resource: AllKeyspaces(), Permissions: Of(Select)})
	b := EncodeSnapshot(s)
	for i := range b {
		flipped := bytes.Clone(b)
		flipped[i] ^= 0x20
		if _, err := DecodeSnapshot(flipped); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
	}
	if _, err := DecodeSnapshot(b[:len(b)-1]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("truncated: %v", err)
	}
}

func FuzzDecodeChange(f *testing.F) {
	for _, c := range sampleChanges {
		f.Add(AppendChange(nil, c))
	}
	f.Add([]byte{1, 0xff, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeChange(b)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes: the encoding is
		// canonical, so nodes agree on a change's bytes.
		if again := AppendChange(nil, c); !bytes.Equal(again, b) {
			t.Fatalf("re-encoded %x as %x", b, again)
		}
	})
}

func FuzzDecodeSnapshot(f *testing.F) {
	s := Empty()
	for _, c := range []Change{sampleChanges[0], create("r", false), sampleChanges[1], sampleChanges[3], {Op: OpGrantRole, Role: "cassandra", Grantee: "r"}} {
		var err error
		if s, err = s.Apply(c); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(EncodeSnapshot(s))
	f.Add(EncodeSnapshot(Empty()))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodeSnapshot(b)
		if err != nil {
			return
		}
		if _, err := DecodeSnapshot(EncodeSnapshot(st)); err != nil {
			t.Fatalf("a decoded snapshot does not re-decode: %v", err)
		}
	})
}
