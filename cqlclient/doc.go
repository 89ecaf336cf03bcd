// Package cqlclient is a small CQL native protocol client for programs that
// prepare statements against cqld: the stress tool, benchmarks, and driver
// authors who want a working reference for the batch PREPARE extension
// (docs/prepare_batch.spec).
//
// It speaks protocol v4, or v5 in segments, without compression or
// authentication, and does only what preparing and running statements
// need:
//
//	c, err := cqlclient.Dial(ctx, "127.0.0.1:9042", cqlclient.Options{})
//	if err != nil { ... }
//	defer c.Close()
//	results, err := c.PrepareBatch(ctx, []cqlclient.Statement{
//		{Query: "INSERT INTO kv (k, v) VALUES (?, ?)", Keyspace: "ks"},
//		{Query: "SELECT v FROM kv WHERE k = ?", Keyspace: "ks"},
//	})
//	if err != nil { ... }            // the connection or the request failed
//	for i, r := range results {
//		if r.Err != nil { ... }        // statement i failed: often a *ServerError
//		_ = r.Prepared.ID              // the id to EXECUTE
//		md, err := r.Prepared.Metadata() // bind and result metadata, decoded now
//	}
//
// Dial sends OPTIONS and, when SUPPORTED lists CQLD_PREPARE_BATCH with
// version 1, turns the extension on in STARTUP (Options.DisablePrepareBatch
// keeps it off). CanPrepareBatch reports the outcome. PrepareBatch works
// either way: with the extension it sends PREPARE_BATCH requests (splitting
// by the frame limit and the 65,535-statement limit), without it one
// PREPARE per statement, all in flight together. Prepare is a plain
// PREPARE, for comparison and for servers without the extension.
//
// Query and Execute run a statement with QueryOptions (the protocol
// library's: consistency, positional values, paging, skip metadata) and
// return the RESULT as the library decodes it (*message.RowsResult,
// *message.VoidResult, ...). They do nothing more: no paging through
// results, no re-preparing on UNPREPARED, no retries; cqlstress's lean
// mode, one request in flight per connection, is built on them.
//
// A PREPARED answer's ids are read when it arrives; its metadata is kept as
// the bytes the server sent and decoded by the library's RESULT codec on the
// first Prepared.Metadata call, so preparing costs the client little when
// only the ids are needed (the same for Prepare and PrepareBatch).
//
// A Conn is safe for concurrent use: requests are multiplexed on stream ids
// 1..32767 and a reader goroutine hands each answer to its caller. An ERROR
// answer becomes a *ServerError carrying the decoded message (so an
// UNPREPARED's id or an ALREADY_EXISTS's keyspace are there). After the
// connection breaks every call fails with an error wrapping ErrClosed.
package cqlclient
