package auth

import (
	"errors"
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

// ErrWrite marks a failure to write the store's file: the change was not
// made, and a node applying the metadata log must stop rather than go on
// without it.
var ErrWrite = errors.New("auth: cannot write the role state")

// StoreOptions configures a Store.
type StoreOptions struct {
	FS  vfs.FS
	Dir string
	// Cost is the bcrypt cost of the hashes the store makes; 0 means
	// DefaultCost. Tests use bcrypt.MinCost.
	Cost int
	// Replicated makes the store the metadata log's auth part: a fresh
	// one starts empty, and its default superuser comes, like every
	// change, from the log (DefaultSuperuserChange). Otherwise a fresh
	// store makes cassandra/cassandra itself.
	Replicated bool
	// Cache configures the cache of each role's resolved roles and
	// permissions.
	Cache CacheOptions
}

// Store holds the role state of this node and keeps it in a file of its
// directory, replaced atomically after each change with the index of the
// metadata log's entry it is as of (ApplyAt), so that a restarted node
// applies no entry twice. Its methods are safe for concurrent use; State
// never blocks.
type Store struct {
	fs    vfs.FS
	path  string
	cost  int
	cache CacheOptions

	mu      sync.Mutex // serialises changes
	applied uint64     // under mu
	legacy  bool       // under mu
	cur     atomic.Pointer[State]
}

// OpenStore loads the state from o.Dir, or starts a fresh one there.
func OpenStore(o StoreOptions) (*Store, error) {
	if o.Cost == 0 {
		o.Cost = DefaultCost
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	s := &Store{fs: o.FS, path: filepath.Join(o.Dir, snapshotFile), cost: o.Cost, cache: o.Cache}
	if err := storage.MkdirAllSynced(o.FS, o.Dir); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	data, ok, err := storage.ReadFileIfExists(o.FS, s.path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	if ok {
		st, index, version, err := decodeSnapshot(data)
		if err != nil {
			return nil, fmt.Errorf("auth: load %s: %w", s.path, err)
		}
		s.applied, s.legacy = index, version < snapshotVersion
		s.publish(st)
		return s, nil
	}
	s.publish(Empty())
	if o.Replicated {
		return s, nil
	}
	c, err := s.DefaultSuperuserChange()
	if err != nil {
		return nil, err
	}
	if err := s.Submit(c); err != nil {
		return nil, err
	}
	return s, nil
}

// DefaultSuperuserChange is the change that creates cassandra/cassandra in
// a state without roles.
func (s *Store) DefaultSuperuserChange() (Change, error) {
	h, err := s.Hash(defaultPassword)
	if err != nil {
		return Change{}, err
	}
	return Change{Op: OpSetupDefault, Role: DefaultSuperuser, Set: AttrPassword | AttrLogin | AttrSuperuser,
		SaltedHash: h, Login: true, Superuser: true}, nil
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

// Applied is the index of the metadata log's entry the state is as of: 0
// for a state the log never changed.
func (s *Store) Applied() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied
}

// Legacy reports whether the state was loaded from a file written before
// the metadata log carried role changes (a node that ran alone): its
// roles are in no log yet.
func (s *Store) Legacy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.legacy
}

// Submit applies the changes here, all or none, as of the index the store
// is at: the store alone, without a metadata log.
func (s *Store) Submit(cs ...Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(s.applied, cs)
}

// ApplyAt applies the changes of the metadata log's entry at index, all or
// none, and makes the result durable, recorded as of index, before it is
// visible. An error from Apply (Cassandra's, for the client) leaves
// everything as it was, as does a failure to write (ErrWrite).
func (s *Store) ApplyAt(index uint64, cs ...Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(max(index, s.applied), cs)
}

// Forget forgets every permission on r (and on its tables and functions
// when r is a keyspace), recorded as of the index the store is already at: it is the
// side effect of another part's entry (a schema change dropping r), made
// before that part records the entry, so that a restart between the two
// makes it again, which changes nothing the second time.
func (s *Store) Forget(r Resource) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(s.applied, []Change{{Op: OpDropResource, Resource: r}})
}

// applyLocked applies cs and records the result as of index. REQUIRES:
// s.mu held.
func (s *Store) applyLocked(index uint64, cs []Change) error {
	cur := s.cur.Load()
	next := cur
	for _, c := range cs {
		var err error
		if next, err = next.Apply(c); err != nil {
			return err
		}
	}
	if next == cur && index == s.applied && !s.legacy {
		return nil
	}
	if err := s.save(index, next); err != nil {
		return err
	}
	if next != cur {
		s.publish(next)
	}
	return nil
}

// save writes st as of index. REQUIRES: s.mu held.
func (s *Store) save(index uint64, st *State) error {
	if err := storage.WriteFileAtomic(s.fs, s.path, encodeSnapshot(st, index)); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrWrite, s.path, err)
	}
	s.applied, s.legacy = index, false
	return nil
}

// publish makes st the current state, with a cache of its own: a change
// replaces the cache with the state, so what it holds is never stale.
func (s *Store) publish(st *State) {
	st.cache = newCache(s.cache)
	s.cur.Store(st)
}

// Snapshot is the current state, encoded, for the metadata log's
// snapshots.
func (s *Store) Snapshot() []byte { return EncodeSnapshot(s.State()) }

// RestoreAt replaces the state with a Snapshot's, recorded as of index.
func (s *Store) RestoreAt(index uint64, snapshot []byte) error {
	st, err := DecodeSnapshot(snapshot)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.save(index, st); err != nil {
		return err
	}
	s.publish(st)
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
