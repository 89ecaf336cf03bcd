package metrics

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The profiles are on the metrics endpoint for a loopback client, and
// refused to any other address.
func TestPprofLoopbackOnly(t *testing.T) {
	srv, err := Serve("127.0.0.1:0", NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	resp, err := http.Get("http://" + srv.Addr() + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine profile:") {
		t.Fatalf("status %d: %.200s", resp.StatusCode, body)
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:5": true, "127.0.15.3:80": true, "[::1]:9": true, "[::ffff:127.0.0.2]:1": true,
		"10.0.0.1:5": false, "[2001:db8::1]:5": false, "garbage": false,
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
