package server

import "testing"

func TestEncrypts(t *testing.T) {
	for _, tc := range []struct {
		mode           string
		known          bool
		peerDC, peerRk string
		want           bool
	}{
		{"none", true, "dc2", "r2", false},
		{"all", true, "dc1", "r1", true},
		{"dc", true, "dc1", "r2", false},
		{"dc", true, "dc2", "r1", true},
		{"dc", false, "", "", true},
		{"rack", true, "dc1", "r1", false},
		{"rack", true, "dc1", "r2", true},
		{"rack", true, "dc2", "r1", true},
		{"rack", false, "", "", true},
	} {
		if got := encrypts(tc.mode, tc.known, tc.peerDC, tc.peerRk, "dc1", "r1"); got != tc.want {
			t.Errorf("%s to %s/%s (known %v): %v, want %v", tc.mode, tc.peerDC, tc.peerRk, tc.known, got, tc.want)
		}
	}
}
