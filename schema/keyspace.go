package schema

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
	"github.com/cqld/cqld/ring"
	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

const strategyPrefix = "org.apache.cassandra.locator."

var keyspaceNameRE = regexp.MustCompile(`^\w{1,48}$`)

// analyzeCreateKeyspace validates CREATE KEYSPACE's options into the
// keyspace's definition.
func analyzeCreateKeyspace(s *statements.CreateKeyspace, dataCenters []string) (*storage.KeyspaceDef, error) {
	if !keyspaceNameRE.MatchString(s.Keyspace) {
		return nil, cqlerr.Invalidf("Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", s.Keyspace)
	}
	if s.Replication == nil {
		return nil, cqlerr.Invalidf("Missing mandatory option 'replication'")
	}
	repl, err := ValidateReplication(s.Keyspace, s.Replication, nil, dataCenters)
	if err != nil {
		return nil, err
	}
	durable := true
	if s.DurableWrites != nil {
		durable = *s.DurableWrites
	}
	return &storage.KeyspaceDef{Name: s.Keyspace, Replication: repl, DurableWrites: durable}, nil
}

// ValidateReplication makes the replication options of keyspace ks what
// Cassandra 4.0 stores (ReplicationParams.fromMapWithDefaults): the full
// class name, the factors as written, and for NetworkTopologyStrategy the
// 'replication_factor' shorthand expanded to every one of dataCenters not
// named, a data center with factor 0 left out, and, on an ALTER
// (previous is the keyspace's options before it), the data centers of
// previous kept when the shorthand is given, or previous's
// 'replication_factor' (from SimpleStrategy) taken when nothing is. It
// checks them as the strategy does (ring.ParseStrategy), with
// Cassandra's messages.
func ValidateReplication(ks string, opts, previous map[string]string, dataCenters []string) (map[string]string, error) {
	class, ok := opts["class"]
	if !ok {
		return nil, cqlerr.ConfigErrorf("Missing replication strategy class")
	}
	if !strings.Contains(class, ".") {
		class = strategyPrefix + class
	}
	short, ok := strings.CutPrefix(class, strategyPrefix)
	switch {
	case short == "OldNetworkTopologyStrategy":
		return nil, cqlerr.ConfigErrorf("The support for the OldNetworkTopologyStrategy has been removed in C* version 4.0. The keyspace strategy should be switch to NetworkTopologyStrategy")
	case !ok:
		return nil, cqlerr.ConfigErrorf("Unable to find replication strategy class '%s'", class)
	case short == "LocalStrategy":
		return nil, cqlerr.Invalidf("Unable to use given strategy class: LocalStrategy is reserved for internal use.")
	}
	out := make(map[string]string, len(opts)+len(dataCenters))
	for k, v := range opts {
		if k != "class" {
			out[k] = v
		}
	}
	if short == "NetworkTopologyStrategy" {
		prepareNTSOptions(out, previous, dataCenters)
	}
	out["class"] = class
	if _, err := ring.ParseStrategy(ks, out); err != nil {
		var ce *ring.ConfigError
		if errors.As(err, &ce) {
			return nil, cqlerr.ConfigErrorf("%s", ce.Message)
		}
		return nil, err
	}
	return out, nil
}

// prepareNTSOptions is NetworkTopologyStrategy.prepareOptions: it turns
// the 'replication_factor' shorthand into data centers. A shorthand that
// is no factor is left out, and the rest as given, as Cassandra's
// reflective call swallows the exception.
func prepareNTSOptions(opts, previous map[string]string, dataCenters []string) {
	const key = "replication_factor"
	rf, given := opts[key]
	delete(opts, key)
	switch {
	case !given && len(opts) == 0:
		rf, given = previous[key]
	case given:
		for dc, v := range previous {
			if _, ok := opts[dc]; !ok && dc != key && dc != "class" {
				opts[dc] = v
			}
		}
	}
	if given {
		n, err := ring.ParseReplicationFactor(rf)
		if err != nil {
			return
		}
		for _, dc := range dataCenters {
			if _, ok := opts[dc]; !ok {
				opts[dc] = strconv.Itoa(n)
			}
		}
	}
	for dc, v := range opts {
		if v == "0" {
			delete(opts, dc)
		}
	}
}

// KeyspaceExists is ALREADY_EXISTS for keyspace ks.
func KeyspaceExists(ks string) error {
	return &cqlerr.Error{Code: primitive.ErrorCodeAlreadyExists,
		Msg: fmt.Sprintf("Cannot add existing keyspace \"%s\"", ks), Keyspace: ks}
}

func (sc *Schema) createKeyspace(cur *storage.Schema, def *storage.KeyspaceDef, ifNotExists bool) (*edit, error) {
	name := def.Name
	if sc.system(name) {
		// They exist: Cassandra answers as for any existing keyspace.
		if ifNotExists {
			return unchanged(), nil
		}
		return nil, KeyspaceExists(name)
	}
	if err := sc.userModifiable(name); err != nil {
		return nil, err
	}
	if cur.Keyspace(name) != nil {
		if ifNotExists {
			return unchanged(), nil
		}
		return nil, KeyspaceExists(name)
	}
	return change(changed(primitive.SchemaChangeTypeCreated, primitive.SchemaChangeTargetKeyspace, name, ""), func() error {
		if err := sc.catalog.CreateKeyspace(def); err != nil {
			return fmt.Errorf("create keyspace %s: %w", name, err)
		}
		return nil
	}), nil
}

func (sc *Schema) dropKeyspace(cur *storage.Schema, st *statements.DropKeyspace) (*edit, error) {
	if err := sc.userModifiable(st.Keyspace); err != nil {
		return nil, err
	}
	if cur.Keyspace(st.Keyspace) == nil {
		if st.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Keyspace '%s' doesn't exist", st.Keyspace)
	}
	return change(changed(primitive.SchemaChangeTypeDropped, primitive.SchemaChangeTargetKeyspace, st.Keyspace, ""), func() error {
		dropped, err := sc.catalog.DropKeyspace(st.Keyspace)
		if err != nil {
			return fmt.Errorf("drop keyspace %s: %w", st.Keyspace, err)
		}
		for _, t := range dropped.SortedTables() {
			sc.dropData(t, dropped)
		}
		return nil
	}), nil
}

// checkAlterKeyspace makes the checks of ALTER KEYSPACE that do not depend
// on the keyspace: its options (KeyspaceAttributes.validate) and whether
// it may be altered at all.
func (sc *Schema) checkAlterKeyspace(st *statements.AlterKeyspace) error {
	if len(st.Replication) > 0 && st.Replication["class"] == "" {
		return cqlerr.ConfigErrorf("Missing replication strategy class")
	}
	// Cassandra lets these replicated keyspaces' replication be changed.
	switch st.Keyspace {
	case "system_auth":
		// cqld keeps roles in its metadata log, on every node, and has no
		// replication to change.
		return cqlerr.Invalidf("ALTER KEYSPACE system_auth is not supported: cqld keeps system_auth on every node, through its metadata log")
	case "system_traces":
		// Its placement is fixed, not part of the schema the metadata log
		// orders.
		return cqlerr.Invalidf("ALTER KEYSPACE system_traces is not supported: cqld keeps system_traces at SimpleStrategy with replication_factor 2, as Cassandra creates it")
	}
	return sc.userModifiable(st.Keyspace)
}

// alterKeyspace applies ALTER KEYSPACE st: the replication (when it names
// a class) and durable_writes given replace the keyspace's, and a change
// that leaves both as they were answers no SCHEMA_CHANGE, as Cassandra's
// empty schema diff does. The data stays where it is: a node that becomes
// a replica gets the rows written before from repair, as in Cassandra.
func (sc *Schema) alterKeyspace(cur *storage.Schema, st *statements.AlterKeyspace, dataCenters []string) (*edit, error) {
	if err := sc.checkAlterKeyspace(st); err != nil {
		return nil, err
	}
	k := cur.Keyspace(st.Keyspace)
	if k == nil {
		if st.IfExists {
			return unchanged(), nil
		}
		return nil, cqlerr.Invalidf("Keyspace '%s' doesn't exist", st.Keyspace)
	}
	repl := k.Replication
	if len(st.Replication) > 0 {
		var err error
		if repl, err = ValidateReplication(st.Keyspace, st.Replication, k.Replication, dataCenters); err != nil {
			return nil, err
		}
	}
	durable := k.DurableWrites
	if st.DurableWrites != nil {
		durable = *st.DurableWrites
	}
	if maps.Equal(repl, k.Replication) && durable == k.DurableWrites {
		return unchanged(), nil
	}
	return change(changed(primitive.SchemaChangeTypeUpdated, primitive.SchemaChangeTargetKeyspace, st.Keyspace, ""), func() error {
		if err := sc.catalog.AlterKeyspace(st.Keyspace, repl, durable); err != nil {
			return fmt.Errorf("alter keyspace %s: %w", st.Keyspace, err)
		}
		return nil
	}), nil
}
