package test

import (
	"net/http"
	"strings"
	"testing"
)

// TestLSMMetricsServed: the node's /metrics carries the LSM's own metrics.
func TestLSMMetricsServed(t *testing.T) {
	node, _ := newNode(t)
	_, body := httpDo(t, http.MethodGet, "http://"+node.MetricsAddr()+"/metrics", "", "")
	for _, want := range []string{
		"cqld_lsm_compaction_debt_bytes ", `cqld_lsm_level_files{level="0"} `, "cqld_lsm_l0_sublevels ",
		"cqld_lsm_write_stalls_total ", "cqld_lsm_write_stall_seconds_total ", "cqld_lsm_flushes_total ",
		"cqld_lsm_flush_bytes_total ", "cqld_lsm_compaction_written_bytes_total ", "cqld_lsm_flush_failing 0",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
