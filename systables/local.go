package systables

import (
	"net"
	"net/netip"
	"strconv"
)

// localRows are system.local's one row.
func localRows(s State) []Row {
	l := s.Local()
	return []Row{{
		"key":                     "local",
		"bootstrapped":            "COMPLETED",
		"broadcast_address":       l.ListenAddress,
		"broadcast_port":          int32(l.StoragePort),
		"cluster_name":            l.ClusterName,
		"cql_version":             cqlVersion,
		"data_center":             l.DataCenter,
		"gossip_generation":       l.Generation,
		"host_id":                 l.HostID,
		"listen_address":          l.ListenAddress,
		"listen_port":             int32(l.StoragePort),
		"native_protocol_version": "5",
		"partitioner":             "org.apache.cassandra.dht.Murmur3Partitioner",
		"rack":                    l.Rack,
		"release_version":         ReleaseVersion,
		"rpc_address":             l.RPCAddress,
		"rpc_port":                int32(l.NativePort),
		"schema_version":          SchemaVersion(s.Schema().Digest),
		"tokens":                  tokenStrings(l.Tokens),
	}}
}

func tokenStrings(ts []int64) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = strconv.FormatInt(t, 10)
	}
	return out
}

// inetOrNil is a as system tables hold an inet: nil when invalid.
func inetOrNil(a netip.Addr) any {
	if !a.IsValid() {
		return nil
	}
	return net.IP(a.AsSlice())
}

func peerRows(s State) []Row {
	var rows []Row
	for _, p := range s.Peers() {
		rows = append(rows, Row{
			"peer":            net.IP(p.Addr.Addr().AsSlice()),
			"data_center":     p.DataCenter,
			"host_id":         p.HostID,
			"preferred_ip":    nil,
			"rack":            p.Rack,
			"release_version": nonEmptyOrNil(p.ReleaseVersion),
			"rpc_address":     inetOrNil(p.NativeAddr),
			"schema_version":  p.SchemaVersion,
			"tokens":          tokenStrings(p.Tokens),
		})
	}
	return rows
}

func peerV2Rows(s State) []Row {
	var rows []Row
	for _, p := range s.Peers() {
		r := Row{
			"peer":            net.IP(p.Addr.Addr().AsSlice()),
			"peer_port":       int32(p.Addr.Port()),
			"data_center":     p.DataCenter,
			"host_id":         p.HostID,
			"native_address":  inetOrNil(p.NativeAddr),
			"rack":            p.Rack,
			"release_version": nonEmptyOrNil(p.ReleaseVersion),
			"schema_version":  p.SchemaVersion,
			"tokens":          tokenStrings(p.Tokens),
		}
		if p.NativePort != 0 {
			r["native_port"] = int32(p.NativePort)
		}
		rows = append(rows, r)
	}
	return rows
}

func nonEmptyOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// sizeEstimateRows are system.size_estimates: the tokens as text, as
// Cassandra writes them.
func sizeEstimateRows(s State) []Row {
	var rows []Row
	for _, e := range s.SizeEstimates() {
		rows = append(rows, Row{
			"keyspace_name":       e.Keyspace,
			"table_name":          e.Table,
			"range_start":         strconv.FormatInt(e.RangeStart, 10),
			"range_end":           strconv.FormatInt(e.RangeEnd, 10),
			"mean_partition_size": e.MeanPartitionSize,
			"partitions_count":    e.PartitionsCount,
		})
	}
	return rows
}
