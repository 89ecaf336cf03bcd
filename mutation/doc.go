// Package mutation is a write as a value: the changes to one or more
// partitions, built by the coordinator and applied by a replica.
//
// A Mutation holds one Update per partition it touches, in the order they
// were first written; an Update holds the partition's operations (cells,
// collection and row deletions, row markers, range and partition
// tombstones) in the order they were made. Nothing here knows how a
// replica stores them: the local replica replays the operations into a
// storage batch (package replica), a remote one will receive them encoded
// (codec.go), and hints will keep them on disk in the same encoding.
//
// Read repair goes the other way (repair.go): Mutation.Repair turns a
// reconciled unresolved partition, or its difference from one replica's
// answer, into the writes that bring that replica up to date.
//
// The cells carry their own timestamps and expiry, so applying an Update
// twice, or two replicas applying it in different orders with other
// writes, gives the same result: reconciliation is last write wins per
// cell, done by the store.
//
// A Mutation is not safe for concurrent use: it belongs to one request.
// It references the byte slices it is given (keys, values) without copying
// them; they must stay unchanged until the Mutation is applied.
package mutation
