package stress

import "testing"

func TestDistributionsStayInRange(t *testing.T) {
	for _, spec := range []string{"fixed(7)", "uniform(5..9)", "gaussian(1..100)", "exp(1..1000)", "zipf(1..1000,1.1)", "seq(3..6)"} {
		d, err := ParseDist(spec)
		if err != nil {
			t.Fatal(err)
		}
		s := d.Sampler(newWorker(0, nil, nil, &Config{Seed: 1, ColSize: Fixed(1)}, nil).rnd)
		seen := map[int64]bool{}
		for range 10000 {
			v := s.Next()
			if v < d.Min || v > d.Max {
				t.Fatalf("%s drew %d", spec, v)
			}
			seen[v] = true
		}
		if want := min(d.Size(), 4); int64(len(seen)) < want {
			t.Errorf("%s drew only %d distinct values", spec, len(seen))
		}
	}
	// A sequence hands each value out once before it wraps, across samplers.
	d := Seq(1, 100)
	a, b := d.Sampler(nil), d.Sampler(nil)
	seen := map[int64]bool{}
	for range 50 {
		seen[a.Next()], seen[b.Next()] = true, true
	}
	if len(seen) != 100 {
		t.Errorf("two samplers of seq(1..100) drew %d distinct values in 100 draws", len(seen))
	}
}
