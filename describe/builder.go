package describe

import (
	"sort"
	"strings"

	"github.com/cqld/cqld/statements"
)

// builder writes CQL as Cassandra's CqlBuilder does: a line's indentation
// (four spaces a level) is written with its first text, so a line ended
// before a level changes takes the new level.
type builder struct {
	b       strings.Builder
	indent  int
	newLine bool
}

func (b *builder) pad() {
	if b.newLine {
		for i := 0; i < b.indent; i++ {
			b.b.WriteString("    ")
		}
		b.newLine = false
	}
}

func (b *builder) str(s string) *builder {
	b.pad()
	b.b.WriteString(s)
	return b
}

// name writes an identifier, quoted when Cassandra would quote it.
func (b *builder) name(s string) *builder { return b.str(statements.MaybeQuote(s)) }

// quoted writes s between single quotes, doubling those in it.
func (b *builder) quoted(s string) *builder {
	return b.str("'" + strings.ReplaceAll(s, "'", "''") + "'")
}

func (b *builder) nl() *builder {
	b.b.WriteByte('\n')
	b.newLine = true
	return b
}

func (b *builder) in() *builder { b.indent++; return b }

func (b *builder) out() *builder {
	if b.indent > 0 {
		b.indent--
	}
	return b
}

// textMap writes m as {'k': 'v', ...} in key order (CqlBuilder.append(Map)
// copies it into a TreeMap); the values are quoted when quote is set.
func (b *builder) textMap(m map[string]string, quote bool) *builder {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.str("{")
	for i, k := range keys {
		if i > 0 {
			b.str(", ")
		}
		b.quoted(k).str(": ")
		if quote {
			b.quoted(m[k])
		} else {
			b.str(m[k])
		}
	}
	return b.str("}")
}

func (b *builder) String() string { return b.b.String() }
