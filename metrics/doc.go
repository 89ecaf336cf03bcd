// Package metrics defines cqld's Prometheus metrics and serves them.
//
// Nothing here is global: a caller creates a prometheus.Registry, builds the
// metric sets it needs with the New* constructors (which register on it), and
// hands each set to the package that updates it. Serve exposes the registry
// on /metrics for Prometheus to scrape.
//
// Names follow Prometheus conventions: a cqld_ prefix, a subsystem per
// layer (cqld_native_* for the client protocol), base units (seconds,
// bytes) and _total on counters.
package metrics
