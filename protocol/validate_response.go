package protocol

import (
	"fmt"

	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// maxTypeDepth bounds how deeply a column type in RESULT metadata may nest
// (list<map<int, frozen<tuple<...>>>>): the codec reads types recursively,
// so without a bound a long enough body would overflow the client's stack.
// No type a server can create comes near it.
const maxTypeDepth = 256

// checkResponseBody is checkBody for the client side: it walks a response
// body and verifies every length and count it declares against the bytes
// that are there, before the message codec reads it.
//
// NB: the codec allocates from counts before it reads what they count (a
// ROWS result makes its row slice from the row count), so a 16-byte body
// claiming 2^31 rows of no columns would make it allocate 51 GB. Every
// count is checked here against the least number of bytes its items take,
// and a row of no columns counts as one byte, so no body allocates more
// than a small multiple of its own size.
func checkResponseBody(op primitive.OpCode, v primitive.ProtocolVersion, flags primitive.HeaderFlag, body []byte) error {
	c := cursor{b: body}
	if flags.Contains(primitive.HeaderFlagTracing) {
		c.skip(16, "a tracing id")
	}
	if flags.Contains(primitive.HeaderFlagCustomPayload) {
		c.bytesMap()
	}
	if flags.Contains(primitive.HeaderFlagWarning) {
		c.stringList()
	}
	switch op {
	case primitive.OpCodeError:
		c.errorBody(v)
	case primitive.OpCodeReady:
	case primitive.OpCodeAuthenticate:
		c.string()
	case primitive.OpCodeSupported:
		c.stringMultimap()
	case primitive.OpCodeResult:
		c.result(v)
	case primitive.OpCodeEvent:
		c.event()
	case primitive.OpCodeAuthChallenge, primitive.OpCodeAuthSuccess:
		c.bytes()
	case OpCodePreparedBatch:
		// Its codec bounds its own counts and checks each result with
		// checkResponseBody.
	default:
		return fmt.Errorf("unexpected response opcode 0x%02x", byte(op))
	}
	return c.err
}

// errorBody reads an ERROR body (spec §9).
func (c *cursor) errorBody(v primitive.ProtocolVersion) {
	code := primitive.ErrorCode(c.int())
	c.string()
	switch code {
	case primitive.ErrorCodeUnavailable:
		c.skip(2+4+4, "UNAVAILABLE's fields")
	case primitive.ErrorCodeReadTimeout:
		c.skip(2+4+4+1, "READ_TIMEOUT's fields")
	case primitive.ErrorCodeWriteTimeout:
		c.skip(2+4+4, "WRITE_TIMEOUT's fields")
		c.string() // then a CAS timeout's contentions: fixed size, left to the codec
	case primitive.ErrorCodeReadFailure, primitive.ErrorCodeWriteFailure:
		c.skip(2+4+4, "the failure's fields")
		if v.SupportsReadWriteFailureReasonMap() {
			c.reasonMap()
		} else {
			c.int()
		}
		if code == primitive.ErrorCodeReadFailure {
			c.byte()
		} else {
			c.string()
		}
	case primitive.ErrorCodeFunctionFailure:
		c.string()
		c.string()
		c.stringList()
	case primitive.ErrorCodeAlreadyExists:
		c.string()
		c.string()
	case primitive.ErrorCodeUnprepared:
		c.shortBytes()
	case ErrorCodeCasWriteUnknown:
		c.skip(2+4+4, "CAS_WRITE_UNKNOWN's fields")
	}
}

// reasonMap reads v5's <reasonmap>: an [int] count of an [inetaddr] (a
// length byte and 4 or 16 bytes) and a [short] failure code.
func (c *cursor) reasonMap() {
	for n := c.count(int64(c.int()), 1+4+2, "failure reasons"); n > 0 && c.ok(); n-- {
		switch l := c.byte(); l {
		case 4, 16:
			c.skip(int(l), "an [inetaddr]")
		default:
			if c.err == nil {
				c.err = fmt.Errorf("invalid [inetaddr] length %d at offset %d", l, c.pos-1)
			}
		}
		c.short()
	}
}

// result reads a RESULT body (spec §4.2.5).
func (c *cursor) result(v primitive.ProtocolVersion) {
	switch kind := primitive.ResultType(c.int()); kind {
	case primitive.ResultTypeVoid:
	case primitive.ResultTypeSetKeyspace:
		c.string()
	case primitive.ResultTypeSchemaChange:
		c.schemaChange()
	case primitive.ResultTypePrepared:
		c.shortBytes()
		if v.SupportsResultMetadataId() {
			c.shortBytes()
		}
		c.variablesMetadata(v)
		c.rowsMetadata()
	case primitive.ResultTypeRows:
		cols := c.rowsMetadata()
		// A row takes 4 bytes per column at least; a row of no columns
		// takes none, and counts as one so its slice is bounded too.
		perRow := 4 * int64(cols)
		if perRow == 0 {
			perRow = 1
		}
		rows := c.count(int64(c.int()), perRow, "rows")
		for i := 0; i < rows*cols && c.ok(); i++ {
			c.bytes()
		}
	default:
		if c.err == nil {
			c.err = fmt.Errorf("unknown RESULT kind %d", kind)
		}
	}
}

// schemaChange reads the body of a SCHEMA_CHANGE result or event (v3+).
func (c *cursor) schemaChange() {
	c.string() // change type
	target := c.short()
	if !c.need(target, "a schema change target") {
		return
	}
	t := primitive.SchemaChangeTarget(c.b[c.pos : c.pos+target])
	c.pos += target
	c.string() // keyspace
	switch t {
	case primitive.SchemaChangeTargetKeyspace:
	case primitive.SchemaChangeTargetTable, primitive.SchemaChangeTargetType:
		c.string()
	case primitive.SchemaChangeTargetFunction, primitive.SchemaChangeTargetAggregate:
		c.string()
		c.stringList()
	}
}

// event reads an EVENT body (spec §4.2.6).
func (c *cursor) event() {
	n := c.short()
	if !c.need(n, "an event type") {
		return
	}
	t := primitive.EventType(c.b[c.pos : c.pos+n])
	c.pos += n
	switch t {
	case primitive.EventTypeSchemaChange:
		c.schemaChange()
	case primitive.EventTypeStatusChange, primitive.EventTypeTopologyChange:
		c.string()
		switch l := c.byte(); l {
		case 4, 16:
			c.skip(int(l)+4, "an [inet]")
		default:
			if c.err == nil {
				c.err = fmt.Errorf("invalid [inet] length %d at offset %d", l, c.pos-1)
			}
		}
	}
}

// variablesMetadata reads a PREPARED result's bind marker metadata.
func (c *cursor) variablesMetadata(v primitive.ProtocolVersion) {
	flags := primitive.VariablesFlag(c.int())
	cols := c.int()
	if v >= primitive.ProtocolVersion4 {
		pk := c.int()
		if pk > 0 {
			for n := c.count(int64(pk), 2, "partition key indexes"); n > 0 && c.ok(); n-- {
				c.short()
			}
		}
	}
	if cols > 0 {
		c.columnSpecs(int64(cols), flags.Contains(primitive.VariablesFlagGlobalTablesSpec))
	}
}

// rowsMetadata reads a ROWS result's metadata and returns its column
// count, checked to be possible: every row carries that many values, so
// the rows' check depends on it.
func (c *cursor) rowsMetadata() int {
	flags := primitive.RowsFlag(c.int())
	cols := c.int()
	if cols < 0 && c.err == nil {
		c.err = fmt.Errorf("negative column count %d at offset %d", cols, c.pos-4)
	}
	if flags.Contains(primitive.RowsFlagHasMorePages) {
		c.bytes()
	}
	if flags.Contains(primitive.RowsFlagMetadataChanged) {
		c.shortBytes()
	}
	if flags.Contains(primitive.RowsFlagDseContinuousPaging) {
		c.int()
	}
	if flags&primitive.RowsFlagNoMetadata == 0 {
		c.columnSpecs(int64(cols), flags.Contains(primitive.RowsFlagGlobalTablesSpec))
	}
	if !c.ok() {
		return 0
	}
	return int(cols)
}

// columnSpecs reads n column specifications: a keyspace and a table each
// unless global, then a name and a type.
func (c *cursor) columnSpecs(n int64, global bool) {
	per := int64(2 + 2)
	if global {
		c.string()
		c.string()
	} else {
		per += 2 + 2
	}
	for i := c.count(n, per, "column specs"); i > 0 && c.ok(); i-- {
		if !global {
			c.string()
			c.string()
		}
		c.string()
		c.dataType(0)
	}
}

// dataType reads an [option] naming a type, with what parametrises it.
func (c *cursor) dataType(depth int) {
	if depth > maxTypeDepth {
		if c.err == nil {
			c.err = fmt.Errorf("a column type nests more than %d deep at offset %d", maxTypeDepth, c.pos)
		}
		return
	}
	switch code := primitive.DataTypeCode(c.short()); code {
	case primitive.DataTypeCodeCustom:
		c.string()
	case primitive.DataTypeCodeList, primitive.DataTypeCodeSet:
		c.dataType(depth + 1)
	case primitive.DataTypeCodeMap:
		c.dataType(depth + 1)
		c.dataType(depth + 1)
	case primitive.DataTypeCodeUdt:
		c.string()
		c.string()
		for n := c.count(int64(c.short()), 2+2, "user type fields"); n > 0 && c.ok(); n-- {
			c.string()
			c.dataType(depth + 1)
		}
	case primitive.DataTypeCodeTuple:
		for n := c.count(int64(c.short()), 2, "tuple fields"); n > 0 && c.ok(); n-- {
			c.dataType(depth + 1)
		}
	default:
		if code > primitive.DataTypeCodeDuration && c.err == nil {
			c.err = fmt.Errorf("unknown type code 0x%04x at offset %d", uint16(code), c.pos-2)
		}
	}
}
