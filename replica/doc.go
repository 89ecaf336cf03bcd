// Package replica is the seam between the coordinator and the data: a
// Replica applies mutations and answers reads for the partitions it holds.
//
// The coordinator reaches data only through this interface. Today every
// partition is on this node, so a Replica is Local, over the node's storage
// engine, and the calls it makes are exactly the engine's. With the
// cluster, a remote implementation will send the same requests to another
// node over messaging, and the coordinator will pick replicas from the
// ring and combine their answers at the request's consistency level.
//
// Writes are values (package mutation): the coordinator builds them without
// touching storage, so the same mutation can be sent to several replicas,
// kept as a hint, or replayed.
package replica
