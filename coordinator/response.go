package coordinator

import (
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
)

// A response must fit in one frame of native_transport_max_frame_size
// (Options.MaxResponseSize): a client with the same limit would refuse a
// longer one, and building it is what a request could make the node
// hold. A SELECT counts the bytes of its rows as it reads them: a page
// that fills the frame ends early with a paging state (the protocol lets
// a page hold fewer rows than asked for), and an unpaged result that
// passes it stops reading and is refused with INVALID, as Cassandra
// refuses a request over the limit. So no read holds more than about a
// frame of rows, however many it matches; the frontend checks every
// encoded answer against the same limit.

// defaultMaxResponseSize is native_transport_max_frame_size's default.
const defaultMaxResponseSize = 16 << 20

// rowsResultOverhead is what a ROWS result takes beyond its metadata's
// columns and its rows: the frame header, kind, flags, counts, and a
// paging state.
const rowsResultOverhead = protocol.HeaderLen + 4 + 4 + 4 + 4 + 256

// rowsRoom is the bytes the rows of a result whose column metadata takes
// metaSize bytes may take, or the refusal when the metadata alone does not
// fit.
func (c *Coordinator) rowsRoom(metaSize int) (int, error) {
	max := c.opts.MaxResponseSize
	if max <= 0 {
		max = defaultMaxResponseSize
	}
	room := max - metaSize - rowsResultOverhead
	if room <= 0 {
		return 0, responseTooBig(max)
	}
	return room, nil
}

func responseTooBig(max int) error {
	return invalidf("%s", protocol.ResponseTooBig(max))
}

// rowSize is the bytes a row's values take in a ROWS result.
func rowSize(vals [][]byte) int {
	n := 0
	for _, v := range vals {
		n += 4 + len(v)
	}
	return n
}

// metadataSize is the bytes the column specifications cols take in a ROWS
// result's metadata, at most (each with its own keyspace and table).
func metadataSize(cols []*message.ColumnMetadata) int {
	n := 0
	for _, c := range cols {
		t, err := datatype.LengthOfDataType(c.Type, primitive.ProtocolVersion5)
		if err != nil {
			t = 2
		}
		n += 2 + len(c.Keyspace) + 2 + len(c.Table) + 2 + len(c.Name) + t
	}
	return n
}
