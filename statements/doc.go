// Package statements turns CQL query strings into syntax trees.
//
// Parsing happens in three steps, mirroring Cassandra's ANTLR grammar
// (src/antlr/Lexer.g and Parser.g) without generated code:
//
//  1. The lexer (lexer.go) splits the query into tokens. It knows the whole
//     CQL lexicon: every keyword (case-insensitive; many are "unreserved"
//     and may also be used as names), unquoted identifiers (lower-cased),
//     "quoted" identifiers, '...' and $$...$$ strings, integers, floats
//     (including NaN and Infinity), hex blobs, UUIDs, booleans, durations
//     (1h30m, P1D, PT2H, P0001-02-03T04:05:06), bind markers and
//     punctuation; comments (--, //, /* */) are skipped. Tokens carry
//     Cassandra-style positions (1-based line, 0-based column). The lexer
//     allocates nothing per token beyond strings it has to build
//     (identifiers containing upper case, strings containing escapes).
//
//  2. The parser (parser.go) is a hand-written recursive-descent parser
//     over tokens it has the lexer produce as it reaches them (held in
//     fixed chunks, tokens.go), with one parse function per grammar rule
//     and a small set of peek/next/accept/expect helpers. Hostile input
//     is bounded: nesting, and operator and field chains, stop at
//     maxDepth; tokens past the point where parsing fails are lexed (a
//     lexing error anywhere still comes first, as in Cassandra) but not
//     kept, so a refused query costs next to nothing however long it is. Errors are reported
//     with Cassandra's wording and positions ("line 1:9 mismatched input
//     'FROMM' expecting K_FROM") as *SyntaxError. parser.go holds SELECT,
//     USE, CREATE/DROP KEYSPACE and the dispatch on the leading keywords;
//     parser_dml.go INSERT, UPDATE, DELETE, BATCH and TRUNCATE;
//     parser_ddl.go CREATE/ALTER/DROP TABLE and TYPE, ALTER KEYSPACE and
//     CREATE FUNCTION; parser_index.go CREATE/DROP INDEX;
//     parser_describe.go DESCRIBE (describe.go has its AST); parser_auth.go
//     the role and permission statements (auth.go has their AST). Statement kinds cqld
//     does not implement (custom indexes, CREATE MATERIALIZED VIEW, triggers,
//     identities) are recognised by
//     their leading keywords and reported as *UnsupportedError, which
//     names the statement, so that the server can refuse them as invalid
//     requests rather than as syntax errors.
//     Parsers and their token buffers are pooled, so parsing an unprepared
//     query allocates little more than the resulting tree.
//
//  3. The result is an AST (ast.go): Statement values (*Select, *Insert,
//     *Update, *Delete, *Batch, *Truncate, *Use, *CreateKeyspace,
//     *AlterKeyspace, *DropKeyspace, table, index and type DDL,
//     *CreateFunction, *Describe), selectors, relations, assignments, conditions and
//     terms. The AST is purely syntactic: names are not checked against a
//     schema and values are not typed. Bind markers are numbered in order
//     of appearance and Parse returns their count.
//
// Nothing here knows the schema. The coordinator resolves an AST against
// it (package coordinator, its plan_*.go): it checks that tables and
// columns exist, types literals and bind markers (producing the prepared
// metadata), validates restrictions, and builds the plan it executes.
// Three packages below serve it: statements/types (CQL values: validation,
// literals, rendering as CQL and JSON, the JSON decoder),
// statements/functions (the native functions, casts and aggregates, one
// registry) and statements/prepared (the prepared statement cache, by
// Cassandra's statement id).
//
// types.go converts CQL type strings, as written in DDL and stored in
// system_schema, to and from the protocol data types of
// github.com/datastax/go-cassandra-native-protocol/datatype; a name that
// is not a native type is an *UnknownTypeError (a user type, which needs a
// schema), and a type cqld cannot represent (vector) an
// *UnsupportedTypeError. usertypes.go resolves user-defined type names
// against a keyspace's types (ParseTypeIn, through a lookup the caller
// provides), applies Cassandra's rules on types nested in collections and
// tuples, and normalises type strings as system_schema shows them
// (NormalizeType).
package statements
