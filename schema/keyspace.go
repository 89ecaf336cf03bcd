package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
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
	repl, err := ValidateReplication(s.Keyspace, s.Replication, dataCenters)
	if err != nil {
		return nil, err
	}
	durable := true
	if s.DurableWrites != nil {
		durable = *s.DurableWrites
	}
	return &storage.KeyspaceDef{Name: s.Keyspace, Replication: repl, DurableWrites: durable}, nil
}

// ValidateReplication checks replication options as Cassandra's
// strategies do and returns them normalised (full class name, numbers as
// written). NetworkTopologyStrategy's 'replication_factor' sets every one
// of dataCenters.
func ValidateReplication(ks string, opts map[string]string, dataCenters []string) (map[string]string, error) {
	if opts == nil {
		return nil, cqlerr.ConfigErrorf("Missing mandatory option 'replication'")
	}
	class, ok := opts["class"]
	if !ok {
		return nil, cqlerr.ConfigErrorf("Missing replication strategy class")
	}
	short := strings.TrimPrefix(class, strategyPrefix)
	out := map[string]string{"class": strategyPrefix + short}
	rf := func(key, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return cqlerr.ConfigErrorf("Replication factor must be numeric; found %s", v)
		}
		if n < 0 {
			return cqlerr.ConfigErrorf("Replication factor must be non-negative; found %s", v)
		}
		out[key] = strconv.Itoa(n)
		return nil
	}
	switch short {
	case "SimpleStrategy":
		v, ok := opts["replication_factor"]
		if !ok {
			return nil, cqlerr.ConfigErrorf("SimpleStrategy requires a replication_factor strategy option.")
		}
		for k := range opts {
			if k != "class" && k != "replication_factor" {
				return nil, cqlerr.ConfigErrorf("Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace %s", k, ks)
			}
		}
		if err := rf("replication_factor", v); err != nil {
			return nil, err
		}
	case "NetworkTopologyStrategy":
		keys := make([]string, 0, len(opts))
		for k := range opts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch k {
			case "class":
			case "replication_factor":
				// 4.0: a default for every known datacenter.
				for _, dc := range dataCenters {
					if err := rf(dc, opts[k]); err != nil {
						return nil, err
					}
				}
			default:
				if err := rf(k, opts[k]); err != nil {
					return nil, err
				}
			}
		}
	case "LocalStrategy", "EverywhereStrategy":
		return nil, cqlerr.ConfigErrorf("Unable to use given strategy class: LocalStrategy is reserved for internal use.")
	default:
		return nil, cqlerr.ConfigErrorf("Unable to find replication strategy class '%s%s'", strategyPrefix, short)
	}
	return out, nil
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
