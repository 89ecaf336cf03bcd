// Package protocol is cqld's side of the CQL native protocol: frames
// (envelopes) of v3, v4 and v5, v5's checksummed segments, and the LZ4 and
// Snappy body compressors. It is pure encode/decode: no sockets, no
// goroutines, no state beyond what a caller hands in.
//
// Message bodies are encoded and decoded by
// github.com/datastax/go-cassandra-native-protocol; this package adds what a
// server cut from an event loop needs on top of it:
//
//   - ParseHeader reads a 9-byte legacy header out of a peeked buffer without
//     consuming it, so the event loop can wait for a whole frame;
//     Header.Check refuses an unsupported version (VersionError) or a body
//     over the frame limit (TooBigError, whose body the frontend skips)
//     before the body is read.
//   - DecodeRequest turns one whole frame into a Request, decompressing the
//     body with a bounded Compressor (NewCompressor: lz4, snappy) first. It
//     walks every length the body declares before the library's codec reads
//     it (validate.go), since the codec allocates each value at its
//     declared length: no body allocates more than its frame's size. The
//     common EXECUTE is decoded by hand (execute.go) in one allocation.
//   - AppendResponse encodes a Response into a frame, compressing the body
//     when the connection negotiated compression.
//   - SegmentDecoder and AppendSegments carry envelopes inside v5 segments
//     once a v5 connection has sent READY or AUTHENTICATE. A server's
//     decoder skips an envelope over the limit (SkipOversized) and gives
//     its header alone in its place (Oversized), without keeping it.
//   - PrepareBatchCodec and PreparedBatchCodec add the CQLD_PREPARE_BATCH
//     extension's two messages (docs/prepare_batch.spec) to the library's
//     frame codec; a RawResult (EncodeResult) is a result encoded once and
//     answered many times. DecodeResponse, AppendRequest,
//     SplitPreparedBatch and DecodeResult serve clients (cqlclient);
//     response bodies are walked before the codec reads them as requests
//     are (validate_response.go), every count checked against the bytes
//     left, so a hostile server cannot make a client allocate much more
//     than the body it sent.
//
// Request and Response are the values that cross the seam between the
// frontend (which owns connections) and the layer that executes requests;
// Later takes an answer given after the call that took the request
// returned (a write waiting for its commit log sync).
//
// Every decoder here takes untrusted bytes: it returns an error on short or
// malformed input and never panics; each has a fuzz test.
package protocol
