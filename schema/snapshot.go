package schema

import "github.com/datastax/go-cassandra-native-protocol/message"

// Snapshot encodes the whole schema, as Restore takes it: what a node far
// behind the metadata log, or new to it, installs instead of replaying
// every change.
func (s *Schema) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.catalog.Snapshot()
}

// ApplyAt is Apply for the change of the metadata log's entry at index:
// the catalog records index with what the change writes, so that a node
// restarting knows which entries its schema already holds.
func (s *Schema) ApplyAt(index uint64, ch Change) (message.Message, error) {
	s.catalog.Applying(index)
	return s.Apply(ch)
}

// Applied is the metadata log index the catalog last recorded.
func (s *Schema) Applied() uint64 { return s.catalog.Applied() }

// Unchanged reports whether ch, applied now, would change nothing: an IF
// [NOT] EXISTS that finds its object there (or not), which a proposer
// answers without ordering it. Its error is Validate's.
func (s *Schema) Unchanged(ch Change) (bool, error) {
	e, err := s.decide(&ch)
	if err != nil {
		return false, err
	}
	return e.do == nil, nil
}

// RestoreAt is Restore for a snapshot of the metadata log at index.
func (s *Schema) RestoreAt(index uint64, snapshot []byte) error {
	s.catalog.Applying(index)
	return s.Restore(snapshot)
}

// Restore replaces the whole schema with a Snapshot's. The rows of the
// tables it no longer has are removed, as a DROP would.
func (s *Schema) Restore(snapshot []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data.WaitApplies()
	old, err := s.catalog.Restore(snapshot)
	if err != nil {
		return err
	}
	cur := s.catalog.Current()
	for _, k := range old.SortedKeyspaces() {
		for _, t := range k.SortedTables() {
			if nk := cur.Keyspace(k.Name); nk != nil {
				if nt := nk.Tables[t.Name]; nt != nil && nt.ID == t.ID {
					continue
				}
			}
			s.dropData(t, k)
		}
	}
	return nil
}
