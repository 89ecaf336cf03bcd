package schema

// Snapshot encodes the whole schema, as Restore takes it: what a node far
// behind the metadata log, or new to it, installs instead of replaying
// every change.
func (s *Schema) Snapshot() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.catalog.Snapshot()
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
