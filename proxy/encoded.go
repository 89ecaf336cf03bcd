package proxy

import (
	"context"
	"fmt"
	"slices"

	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/replica"
	"github.com/cqld/cqld/storage"
)

// encodedReplica takes a write already in its internode encoding
// (replica.Remote), which the proxy makes once for all of a write's
// replicas, and answers it on a goroutine of its transport: done must not
// block.
type encodedReplica interface {
	ApplyEncodedAsync(ctx context.Context, payload []byte, done func(error))
}

var _ encodedReplica = (*replica.Remote)(nil)

// encoded is a write's Updates in their internode encoding (mutation.Append),
// made once: the replicas reached over the network are sent these bytes,
// the others get Updates decoded from them. Either outlives the request,
// whose buffers the original Updates reference.
type encoded struct {
	buf []byte
	// ends[i] is where Update i's encoding ends in buf.
	ends   []int
	tables map[[16]byte]*storage.Table
	// last is the payload made last, for the Updates lastIdx: the
	// replicas of a write mostly take the same ones.
	lastIdx []int
	last    []byte
}

func encode(updates []*mutation.Update) (*encoded, error) {
	e := &encoded{ends: make([]int, len(updates)), tables: map[[16]byte]*storage.Table{}}
	for i, u := range updates {
		var err error
		if e.buf, err = mutation.Append(e.buf, u); err != nil {
			return nil, fmt.Errorf("proxy: encoding a write to %s.%s: %w", u.Table.Def.Keyspace, u.Table.Def.Name, err)
		}
		e.ends[i] = len(e.buf)
		e.tables[u.Table.Def.ID] = u.Table
	}
	return e, nil
}

func (e *encoded) update(i int) []byte {
	start := 0
	if i > 0 {
		start = e.ends[i-1]
	}
	return e.buf[start:e.ends[i]]
}

// payload is the mutation of Updates idx (in increasing order) as a
// replica.Remote is sent it. The caller does not modify it.
func (e *encoded) payload(idx []int) []byte {
	if e.last != nil && slices.Equal(idx, e.lastIdx) {
		return e.last
	}
	var updates []byte
	if n := len(idx); n > 0 && idx[n-1]-idx[0] == n-1 {
		// A run of Updates is one stretch of buf.
		start := 0
		if idx[0] > 0 {
			start = e.ends[idx[0]-1]
		}
		updates = e.buf[start:e.ends[idx[n-1]]]
	} else {
		for _, i := range idx {
			updates = append(updates, e.update(i)...)
		}
	}
	e.lastIdx, e.last = idx, replica.AppendEncodedMutation(nil, len(idx), updates)
	return e.last
}

// mutation decodes Updates idx into a mutation of their own.
func (e *encoded) mutation(idx []int) (*mutation.Mutation, error) {
	lookup := func(id [16]byte) (*storage.Table, bool) { t, ok := e.tables[id]; return t, ok }
	m := &mutation.Mutation{Updates: make([]*mutation.Update, 0, len(idx))}
	for _, i := range idx {
		u, _, err := mutation.Decode(e.update(i), lookup)
		if err != nil {
			return nil, fmt.Errorf("proxy: copy of a write: %w", err)
		}
		m.Updates = append(m.Updates, u)
	}
	return m, nil
}
