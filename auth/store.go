package auth

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/crypto/bcrypt"

	"github.com/cqld/cqld/storage"
)

// The default superuser a fresh state has, as in Cassandra.
const (
	DefaultSuperuser = "cassandra"
	defaultPassword  = "cassandra"
)

// DefaultCost is bcrypt's work factor for new hashes: 2^10 rounds,
// Cassandra's auth_bcrypt_gensalt_log2_rounds default.
const DefaultCost = 10

// snapshotFile is the state's file in the store's directory.
const snapshotFile = "roles"

// StoreOptions configures a Store.
type StoreOptions struct {
	FS  vfs.FS
	Dir string
	// Cost is the bcrypt cost of the hashes the store makes; 0 means
	// DefaultCost. Tests use bcrypt.MinCost.
	Cost int
}

// Store is the local submitter of changes: until the cluster's replicated
// metadata log carries them, it applies changes one at a time and keeps
// the state in a file of its directory, replaced atomically after each.
// Its methods are safe for concurrent use; State never blocks.
type Store struct {
	fs   vfs.FS
	path string
	cost int

	mu  sync.Mutex // serialises Submit
	cur atomic.Pointer[State]
}

// OpenStore loads the state from o.Dir, or creates a fresh one there with
// the default superuser cassandra/cassandra.
func OpenStore(o StoreOptions) (*Store, error) {
	if o.Cost == 0 {
		o.Cost = DefaultCost
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	s := &Store{fs: o.FS, path: filepath.Join(o.Dir, snapshotFile), cost: o.Cost}
	if err := storage.MkdirAllSynced(o.FS, o.Dir); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	data, ok, err := storage.ReadFileIfExists(o.FS, s.path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if ok {
		st, err := DecodeSnapshot(data)
		if err != nil {
			return nil, fmt.Errorf("auth: load %s: %w", s.path, err)
		}
		s.cur.Store(st)
		return s, nil
	}
	s.cur.Store(Empty())
	c, err := s.DefaultSuperuserChange()
	if err != nil {
		return nil, err
	}
	if err := s.Submit(c); err != nil {
		return nil, err
	}
	return s, nil
}

// DefaultSuperuserChange is the change that creates cassandra/cassandra.
func (s *Store) DefaultSuperuserChange() (Change, error) {
	h, err := s.Hash(defaultPassword)
	if err != nil {
		return Change{}, err
	}
	return Change{Op: OpCreateRole, Role: DefaultSuperuser, Set: AttrPassword | AttrLogin | AttrSuperuser,
		SaltedHash: h, Login: true, Superuser: true, IfExists: true}, nil
}

// Hash is the salted bcrypt hash of a password, for a Change that sets it.
// It is slow (bcrypt's point): call it off the event loops.
func (s *Store) Hash(password string) ([]byte, error) {
	h, err := bcrypt.GenerateFromPassword(bcryptInput(password), s.cost)
	if err != nil {
		return nil, fmt.Errorf("auth: hash password: %w", err)
	}
	return h, nil
}

// Cost is the bcrypt cost of the store's hashes.
func (s *Store) Cost() int { return s.cost }

// State is the current state.
func (s *Store) State() *State { return s.cur.Load() }

// Submit applies the changes, all or none, and makes the result durable
// before it is visible. An error from Apply (Cassandra's, for the client)
// leaves everything as it was; so does a failure to write.
func (s *Store) Submit(cs ...Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.cur.Load()
	next := cur
	for _, c := range cs {
		var err error
		if next, err = next.Apply(c); err != nil {
			return err
		}
	}
	if next == cur {
		return nil
	}
	if err := storage.WriteFileAtomic(s.fs, s.path, EncodeSnapshot(next)); err != nil {
		return fmt.Errorf("auth: save roles: %w", err)
	}
	s.cur.Store(next)
	return nil
}

// UsesDefaultPassword reports whether the default superuser exists and
// still has the password cassandra, which start-up warns about. It costs
// one bcrypt check.
func UsesDefaultPassword(s *State) bool {
	r, ok := s.Role(DefaultSuperuser)
	return ok && r.SaltedHash != nil && bcrypt.CompareHashAndPassword(r.SaltedHash, bcryptInput(defaultPassword)) == nil
}

// bcryptInput is the part of a password bcrypt reads: its first 72 bytes.
// jBCrypt, which Cassandra uses, ignores the rest; Go's bcrypt refuses a
// longer password instead, so it is cut here, for both hashing and
// checking, and a long password works as it does in Cassandra.
func bcryptInput(password string) []byte {
	b := []byte(password)
	return b[:min(len(b), 72)]
}
