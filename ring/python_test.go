package ring

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// debianPython is the interpreter Debian's python3-cassandra installs
// into; .ci/run installs the package.
const debianPython = "/usr/bin/python3"

type pyHost struct {
	DC   string `json:"dc"`
	Rack string `json:"rack"`
}

type pyStrategy struct {
	Class   string            `json:"class"`
	Options map[string]string `json:"options"`
}

type pyCase struct {
	Hosts      []pyHost     `json:"hosts"`
	Tokens     []int64      `json:"tokens"`
	Owners     []int        `json:"owners"`
	Strategies []pyStrategy `json:"strategies"`
}

// TestPythonDriverAgrees checks the placement of every ring token of
// random rings (one to three data centers, up to four racks each, vnodes)
// against the DataStax Python driver's, an independent implementation
// that drivers route by. SimpleStrategy must agree in order. For
// NetworkTopologyStrategy the sets must agree, and the order within each
// data center that has at least as many racks as its factor (the driver
// lists replicas by data center, and where racks repeat it keeps
// Cassandra 3's order, in which the repeats come after the last new rack).
//
// The driver (3.25) has one known bug: a node set aside on a repeated rack
// is set aside again for each of its tokens met, and is then taken once
// per time, so its list holds a node twice and lacks another (see
// TestReplicasByHand's "nts rack repeats are the first met" for the
// Cassandra answer). Where its list repeats a node, its nodes must be a
// subset of ours; those tokens are counted in the log.
func TestPythonDriverAgrees(t *testing.T) {
	probe := exec.Command(debianPython, "-c", "import cassandra.metadata")
	probe.Env = pythonEnv()
	if out, err := probe.CombinedOutput(); err != nil {
		msg := "the DataStax Python driver is not installed (apt-get install python3-cassandra, as .ci/run does): " + err.Error() + "\n" + string(out)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	const rings = 150
	var cases []pyCase
	var ringsOf []*Ring
	var strategiesOf [][]Strategy
	for seed := range uint64(rings) {
		rnd := rand.New(rand.NewPCG(seed, 99))
		r := randomRing(t, rnd, 1+rnd.IntN(3), 6, 4, 16)
		c := pyCase{Tokens: r.tokens, Owners: r.owner}
		for _, n := range r.nodes {
			c.Hosts = append(c.Hosts, pyHost{n.DC, n.Rack})
		}
		var ss []Strategy
		for range 4 {
			s := randomStrategy(rnd, r)
			ss = append(ss, s)
			opts := s.Options()
			class := strings.TrimPrefix(opts["class"], classPrefix)
			delete(opts, "class")
			c.Strategies = append(c.Strategies, pyStrategy{class, opts})
		}
		cases = append(cases, c)
		ringsOf = append(ringsOf, r)
		strategiesOf = append(strategiesOf, ss)
	}
	in, err := json.Marshal(map[string][]pyCase{"cases": cases})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, debianPython, "testdata/replicas.py")
	cmd.Env = pythonEnv()
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("replicas.py: %v\n%s", err, stderr.String())
	}
	var res struct {
		Cases [][][][]int `json:"cases"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("replicas.py output: %v", err)
	}
	if len(res.Cases) != rings {
		t.Fatalf("replicas.py answered %d rings of %d", len(res.Cases), rings)
	}

	var checked, driverBug int
	for ci, r := range ringsOf {
		for si, s := range strategiesOf[ci] {
			p := NewPlacement(r, s)
			for i, tok := range r.tokens {
				var ours []int
				for _, h := range p.Replicas(tok) {
					ours = append(ours, r.index[h])
				}
				theirs := res.Cases[ci][si][i]
				checked++
				if _, simple := s.(SimpleStrategy); simple {
					if !slices.Equal(ours, theirs) {
						t.Fatalf("ring %d %v token %d: ours %v, driver's %v", ci, s.Options(), tok, ours, theirs)
					}
					continue
				}
				distinct := slices.Compact(slices.Sorted(slices.Values(theirs)))
				sorted := slices.Sorted(slices.Values(ours))
				if len(distinct) < len(theirs) {
					driverBug++
					for _, n := range distinct {
						if !slices.Contains(ours, n) {
							t.Fatalf("ring %d %v token %d: the driver's %v has %d, ours %v not", ci, s.Options(), tok, theirs, n, ours)
						}
					}
					continue
				}
				if !slices.Equal(sorted, distinct) {
					t.Fatalf("ring %d %v token %d: ours %v, driver's %v", ci, s.Options(), tok, ours, theirs)
				}
				for d, dc := range r.dcs {
					if r.dcRacks[d] < s.ReplicationFactor(dc) {
						continue
					}
					inDC := func(ns []int) []int {
						var out []int
						for _, n := range ns {
							if r.nodeDC[n] == d {
								out = append(out, n)
							}
						}
						return out
					}
					if a, b := inDC(ours), inDC(theirs); !slices.Equal(a, b) {
						t.Fatalf("ring %d %v token %d: order in %s: ours %v, driver's %v", ci, s.Options(), tok, dc, a, b)
					}
				}
			}
		}
	}
	t.Logf("%d ring tokens over %d rings agree with the Python driver; at %d of them the driver's list repeats a node (its bug) and is a subset of ours",
		checked, rings, driverBug)
}

// pythonEnv is the test's environment without what would point Debian's
// interpreter at another Python's modules.
func pythonEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PYTHONPATH=") && !strings.HasPrefix(kv, "PYTHONHOME=") {
			env = append(env, kv)
		}
	}
	return env
}
