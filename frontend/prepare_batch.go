package frontend

import (
	"fmt"

	"github.com/cqld/cqld/protocol"
)

// The batch PREPARE extension is negotiated like ScyllaDB's SCYLLA_*
// extensions: SUPPORTED lists it with the versions the server speaks, and
// a client turns it on by sending the key with one of them in STARTUP.
// Until then PREPARE_BATCH is an unknown opcode, as it is to Cassandra, so
// stock drivers never meet it.

// startupExtensions turns on the extensions the STARTUP options ask for.
// REQUIRES: called on the event loop, before READY.
func (cn *conn) startupExtensions(opts map[string]string) error {
	v, ok := opts[protocol.PrepareBatchExtension]
	if !ok {
		return nil
	}
	if v != protocol.PrepareBatchVersion {
		return fmt.Errorf("Unsupported %s version %q, this server supports %s",
			protocol.PrepareBatchExtension, v, protocol.PrepareBatchVersion)
	}
	cn.prepareBatch = true
	return nil
}
