// Package server assembles a cqld node from its configuration: storage,
// coordinator, frontend and the metrics endpoint, started in that order and
// stopped in the reverse one. cmd/cqld runs one from the command line; the
// end-to-end tests in test/ run them in-process. Starting a node gives the
// Go runtime one processor more than its default (procs.go).
package server
