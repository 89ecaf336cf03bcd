// Package storage is a node's data on disk.
//
// Today it holds the schema catalog (keyspaces) and the node's identity
// (host id, tokens, cluster name); tables, mutations, reads and the LSM
// engine (pebble, its WAL off, durability from package commitlog) arrive
// with the storage-engine issue.
//
// Both are small documents rewritten whole on every change, atomically:
// written to a temporary file, fsynced, renamed over the old one, and the
// directory fsynced, so a crash leaves either the old or the new version,
// never a mix. All file I/O goes through pebble's vfs.FS so tests can run
// on an in-memory or fault-injecting file system.
package storage
