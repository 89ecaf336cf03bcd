package coordinator

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/statements"
	"github.com/cqld/cqld/storage"
)

const strategyPrefix = "org.apache.cassandra.locator."

var keyspaceNameRE = regexp.MustCompile(`^\w{1,48}$`)

// createKeyspacePlan is CREATE KEYSPACE, its options already validated.
type createKeyspacePlan struct {
	noMarkers
	def         *storage.KeyspaceDef
	ifNotExists bool
}

func (c *Coordinator) analyzeCreateKeyspace(s *statements.CreateKeyspace) (plan, error) {
	if !keyspaceNameRE.MatchString(s.Keyspace) {
		return nil, invalidf("Keyspace name must not be empty, more than 48 characters long, or contain non-alphanumeric-underscore characters (got \"%s\")", s.Keyspace)
	}
	repl, err := c.validateReplication(s.Keyspace, s.Replication)
	if err != nil {
		return nil, err
	}
	durable := true
	if s.DurableWrites != nil {
		durable = *s.DurableWrites
	}
	return &createKeyspacePlan{
		def:         &storage.KeyspaceDef{Name: s.Keyspace, Replication: repl, DurableWrites: durable},
		ifNotExists: s.IfNotExists,
	}, nil
}

// validateReplication checks replication options as Cassandra's strategies
// do and returns them normalised (full class name, numbers as written).
func (c *Coordinator) validateReplication(ks string, opts map[string]string) (map[string]string, error) {
	if opts == nil {
		return nil, configErrorf("Missing mandatory option 'replication'")
	}
	class, ok := opts["class"]
	if !ok {
		return nil, configErrorf("Missing replication strategy class")
	}
	short := strings.TrimPrefix(class, strategyPrefix)
	out := map[string]string{"class": strategyPrefix + short}
	rf := func(key, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return configErrorf("Replication factor must be numeric; found %s", v)
		}
		if n < 0 {
			return configErrorf("Replication factor must be non-negative; found %s", v)
		}
		out[key] = strconv.Itoa(n)
		return nil
	}
	switch short {
	case "SimpleStrategy":
		v, ok := opts["replication_factor"]
		if !ok {
			return nil, configErrorf("SimpleStrategy requires a replication_factor strategy option.")
		}
		for k := range opts {
			if k != "class" && k != "replication_factor" {
				return nil, configErrorf("Unrecognized strategy option {%s} passed to SimpleStrategy for keyspace %s", k, ks)
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
				if err := rf(c.opts.DataCenter, opts[k]); err != nil {
					return nil, err
				}
			default:
				if err := rf(k, opts[k]); err != nil {
					return nil, err
				}
			}
		}
	case "LocalStrategy", "EverywhereStrategy":
		return nil, configErrorf("Unable to use given strategy class: LocalStrategy is reserved for internal use.")
	default:
		return nil, configErrorf("Unable to find replication strategy class '%s%s'", strategyPrefix, short)
	}
	return out, nil
}

func (p *createKeyspacePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	name := p.def.Name
	if isSystemKeyspace(name) {
		// They exist: Cassandra answers as for any existing keyspace.
		if p.ifNotExists {
			return &message.VoidResult{}, nil
		}
		return nil, keyspaceExists(name)
	}
	return c.schemaChange(name, func(*storage.KeyspaceDef) (message.Message, error) {
		err := c.catalog.CreateKeyspace(p.def)
		switch {
		case errors.Is(err, storage.ErrKeyspaceExists):
			if p.ifNotExists {
				return &message.VoidResult{}, nil
			}
			return nil, keyspaceExists(name)
		case err != nil:
			return nil, fmt.Errorf("create keyspace %s: %w", name, err)
		}
		return c.schemaChanged(primitive.SchemaChangeTypeCreated, name), nil
	})
}

// dropKeyspacePlan is DROP KEYSPACE.
type dropKeyspacePlan struct {
	noMarkers
	keyspace string
	ifExists bool
}

func (p *dropKeyspacePlan) run(_ context.Context, c *Coordinator, _ *execution) (message.Message, error) {
	return c.schemaChange(p.keyspace, func(k *storage.KeyspaceDef) (message.Message, error) {
		dropped, err := c.catalog.DropKeyspace(p.keyspace)
		switch {
		case errors.Is(err, storage.ErrKeyspaceNotFound):
			if p.ifExists {
				return &message.VoidResult{}, nil
			}
			return nil, invalidf("Keyspace '%s' doesn't exist", p.keyspace)
		case err != nil:
			return nil, fmt.Errorf("drop keyspace %s: %w", p.keyspace, err)
		}
		for _, t := range dropped.Tables {
			c.dropData(t, dropped)
		}
		return c.schemaChanged(primitive.SchemaChangeTypeDropped, p.keyspace), nil
	})
}

// schemaChange runs one schema change on keyspace ks, and is the one place
// DDL is applied: it serialises changes, so each event follows its change
// and no two changes interleave; it refuses changes to system keyspaces;
// and it gives change the keyspace's definition as it is now (nil when the
// keyspace does not exist), whatever the plan saw when it was analysed.
// The cluster's metadata log will order changes here.
func (c *Coordinator) schemaChange(ks string, change func(k *storage.KeyspaceDef) (message.Message, error)) (message.Message, error) {
	c.schemaMu.Lock()
	defer c.schemaMu.Unlock()
	if err := userModifiable(ks); err != nil {
		return nil, err
	}
	return change(c.catalog.Current().Keyspace(ks))
}

// schemaChanged pushes the event for a keyspace change and returns the
// result that answers it. REQUIRES: c.schemaMu held, so events leave in the
// order of the changes.
func (c *Coordinator) schemaChanged(t primitive.SchemaChangeType, ks string) message.Message {
	c.opts.Publish(&message.SchemaChangeEvent{ChangeType: t, Target: primitive.SchemaChangeTargetKeyspace, Keyspace: ks})
	return &message.SchemaChangeResult{ChangeType: t, Target: primitive.SchemaChangeTargetKeyspace, Keyspace: ks}
}
