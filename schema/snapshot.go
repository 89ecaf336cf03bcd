package schema

import (
	"fmt"
	"slices"

	"github.com/datastax/go-cassandra-native-protocol/message"

	"github.com/cqld/cqld/storage"
)

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
// tables it no longer has are removed, as a DROP would. An index's build
// state is each node's own, whatever the snapshot's node had: an index
// this node had keeps its state, and one it did not have (created while
// it was behind) is built here over the rows it holds, as a CREATE INDEX
// builds it.
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
			if sameTable(cur, t) == nil {
				s.dropData(t, k)
			}
		}
	}
	return s.restoreBuildState(old)
}

// sameTable returns the table of in with t's keyspace, name and id, or
// nil.
func sameTable(in *storage.Schema, t *storage.TableDef) *storage.TableDef {
	if nt := in.Table(t.Keyspace, t.Name); nt != nil && nt.ID == t.ID {
		return nt
	}
	return nil
}

// restoreBuildState gives the indexes of the restored schema the build
// state they had in old, and builds the ones old did not have.
// REQUIRES: s.mu held.
func (s *Schema) restoreBuildState(old *storage.Schema) error {
	for _, k := range s.catalog.Current().SortedKeyspaces() {
		for _, t := range k.SortedTables() {
			before := sameTable(old, t)
			def := *t
			def.Indexes = slices.Clone(t.Indexes)
			var build []string
			changed := false
			for i := range def.Indexes {
				ix := &def.Indexes[i]
				building := true // new here
				if before != nil {
					if had := indexNamed(before, ix.Name); had != nil {
						building = had.Building
					} else {
						build = append(build, ix.Name)
					}
				} else {
					build = append(build, ix.Name)
				}
				changed = changed || ix.Building != building
				ix.Building = building
			}
			if changed {
				if err := s.catalog.ReplaceTable(&def); err != nil {
					return fmt.Errorf("restore %s.%s's index build state: %w", def.Keyspace, def.Name, err)
				}
			}
			for _, name := range build {
				// As for CREATE INDEX, a failed build leaves the index
				// building, queries scanning, until a restart builds it.
				if err := s.buildIndex(s.catalog.Current().Table(def.Keyspace, def.Name), name, s.now()); err != nil {
					s.log.Error("cannot build an index a snapshot brought; it answers queries by scanning until the node restarts",
						"index", def.Keyspace+"."+name, "err", err)
				}
			}
		}
	}
	return nil
}

func indexNamed(t *storage.TableDef, name string) *storage.IndexDef {
	for i := range t.Indexes {
		if t.Indexes[i].Name == name {
			return &t.Indexes[i]
		}
	}
	return nil
}
