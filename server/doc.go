// Package server assembles a cqld node from its configuration: storage,
// the cluster membership, the coordinator, the metrics endpoint and the
// frontend, started in that order and stopped in the reverse one. cmd/cqld
// runs one from the command line; the end-to-end tests in test/ run them
// in-process. A node leaves GOMAXPROCS at Go's default, a processor per
// CPU (docs/commitlog.md, "Go processors").
//
// # Topology changes
//
// A node that joins the ring JOINING (cluster.StartNode decides, on
// auto_bootstrap) streams the ranges it takes over before its frontend
// starts, and becomes NORMAL once it serves, so that the NEW_NODE drivers
// get finds it serving. Decommission and removenode run when an operator
// asks (admin.go, POSTs on the metrics endpoint, a superuser's basic
// credentials under PasswordAuthenticator). All three are changes
// (topology.go): one at a time on a node, each sets a member's status
// through the metadata log, waits until every live node has applied it
// and until the writes planned before it have landed (write_request_timeout),
// streams every table's ranges that gain a replica (ring.Movements,
// replica.Stream: two streams at a time, each from its preferred live
// source, resumed from the next source where one failed), and then
// records the outcome. A decommissioning node hands its hints over to a
// live NORMAL node before it leaves (hinthandover.go), or fails. A
// decommissioned node closes Decommissioned; the command shuts it down.
package server
