package auth

import (
	"sync"
	"sync/atomic"
)

// CacheOptions configure the cache of what each role may do: its
// superuser status and the permissions of the roles it holds, resolved
// through the roles granted to it (Cassandra's roles and permissions
// caches). Entries never expire by time: a state's cache lives as long as
// the state, and every change, as the metadata log applies it, publishes
// a new state with an empty cache.
type CacheOptions struct {
	// Off resolves every check from the roles again
	// (roles_validity and permissions_validity 0).
	Off bool
	// MaxEntries bounds the roles cached per state; 0 means 1000
	// (roles_cache_max_entries).
	MaxEntries int
}

const defaultCacheEntries = 1000

// access is what one role may do, resolved.
type access struct {
	super bool
	// perms are the permissions granted to the role and to the roles
	// granted to it, by resource.
	perms map[Resource]Permissions
}

// cache holds resolved accesses by role name. Safe for concurrent use.
type cache struct {
	max int
	n   atomic.Int64
	m   sync.Map // string → *access
}

// newCache is a cache per o, or nil when it is off.
func newCache(o CacheOptions) *cache {
	if o.Off {
		return nil
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = defaultCacheEntries
	}
	return &cache{max: o.MaxEntries}
}

// access resolves what role may do, from the cache when it holds it.
func (s *State) access(role string) *access {
	c := s.cache
	if c != nil {
		if a, ok := c.m.Load(role); ok {
			return a.(*access)
		}
	}
	a := s.resolve(role)
	if c != nil && c.n.Load() < int64(c.max) {
		if _, loaded := c.m.LoadOrStore(role, a); !loaded {
			c.n.Add(1)
		}
	}
	return a
}

// resolve computes what role may do.
func (s *State) resolve(role string) *access {
	a := &access{perms: map[Resource]Permissions{}}
	for _, name := range s.RolesOf(role, true) {
		a.super = a.super || s.roles[name].Superuser
		for res, p := range s.grants[name] {
			a.perms[res] |= p
		}
	}
	return a
}
