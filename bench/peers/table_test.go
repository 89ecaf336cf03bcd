//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestReport: the table puts each cell under its server and client, with
// its multiple of Redis's rate; the default mode's ratios use the same
// client, with the ratio of the two cells' mean fsync beside it; a missing
// cell is a dash; the note says when others used the machine.
func TestReport(t *testing.T) {
	r := &runner{clients: []int{1, 16}, modes: []string{"batch", "adaptive"}}
	cells := []cell{
		{Server: "Redis always", Client: "redis-benchmark", Clients: 1, Rate: 4000, P50: 0.2},
		{Server: "Redis always", Client: "redis-benchmark", Clients: 16, Rate: 20000, P50: 0.5},
		{Server: "Redis always", Client: "lean", Clients: 1, Rate: 4500, P50: 0.18},
		{Server: "cqld batch", Client: "lean", Clients: 1, Rate: 3000, P50: 0.3, Sync: &syncSpread{Mean: 150}},
		{Server: "cqld adaptive", Client: "lean", Clients: 1, Rate: 3600, P50: 0.25, Sync: &syncSpread{Mean: 180}},
		{Server: "cqld adaptive", Client: "gocql", Clients: 16, Rate: 30000, P50: 0.4, Others: 0.5},
	}
	var out bytes.Buffer
	printReport(&out, []string{"header"}, cells, r)
	got := out.String()
	for _, want := range []string{
		"| clients | Redis always | Redis always, lean | batch lean | batch gocql | adaptive lean | adaptive gocql |",
		"| 1 | 4,000, 0.200 | 4,500, 0.180 | 3,000, 0.300, 0.75x | - | 3,600, 0.250, 0.90x | - |",
		"| 16 | 20,000, 0.500 | - | - | - | - | 30,000, 0.400, 1.50x |",
		"| clients | batch / Redis, both lean | adaptive / Redis, both lean | adaptive / batch, lean | adaptive / batch, gocql |",
		"| 1 | 0.67 | 0.80 | 1.20 (fsync 1.20) | - |",
		"The machine was shared: other processes used 0.08 cores on average while the cells ran, 0.50 at most",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	cells[5].Others = 0.05
	if note := sharedNote(cells); !strings.HasPrefix(note, "The machine was otherwise idle") {
		t.Errorf("note %q", note)
	}
}
