package server

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/cqld/cqld/messaging"
)

func TestFaultHandlers(t *testing.T) {
	tr, err := messaging.ListenTCP(messaging.Options{ClusterName: "c", Addr: netip.MustParseAddrPort("127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	mux := http.NewServeMux()
	for path, h := range faultHandlers(tr, slog.New(slog.DiscardHandler)) {
		mux.Handle(path, h)
	}
	do := func(method, target, remote string) (int, string) {
		r := httptest.NewRequest(method, target, nil)
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return w.Code, strings.TrimSpace(w.Body.String())
	}
	const local = "127.0.0.1:40000"

	code, body := do("POST", partitionPath+"?peers=127.0.0.2:7000,127.0.0.3,::ffff:127.0.0.4", local)
	want := []netip.AddrPort{netip.MustParseAddrPort("127.0.0.2:7000"), netip.MustParseAddrPort("127.0.0.3:0"),
		netip.MustParseAddrPort("127.0.0.4:0")}
	if code != http.StatusOK || body != "127.0.0.2:7000,127.0.0.3:0,127.0.0.4:0" || !slices.Equal(tr.Partitioned(), want) {
		t.Fatalf("partition: %d %q, transport cut off from %v", code, body, tr.Partitioned())
	}
	if code, body := do("GET", partitionPath, "[::1]:40000"); code != http.StatusOK || body != "127.0.0.2:7000,127.0.0.3:0,127.0.0.4:0" {
		t.Fatalf("GET partition: %d %q", code, body)
	}
	for _, tc := range []struct {
		method, target, remote string
		code                   int
	}{
		{"POST", partitionPath + "?peers=", local, http.StatusBadRequest},
		{"POST", partitionPath + "?peers=node2", local, http.StatusBadRequest},
		{"POST", partitionPath + "?peers=127.0.0.2", "10.0.0.7:5000", http.StatusForbidden},
		{"POST", healPath, "192.0.2.1:5000", http.StatusForbidden},
		{"DELETE", partitionPath, local, http.StatusMethodNotAllowed},
		{"GET", healPath, local, http.StatusMethodNotAllowed},
	} {
		if code, body := do(tc.method, tc.target, tc.remote); code != tc.code {
			t.Errorf("%s %s from %s: %d %q, want %d", tc.method, tc.target, tc.remote, code, body, tc.code)
		}
	}
	if !slices.Equal(tr.Partitioned(), want) {
		t.Fatalf("refused requests changed the partition: %v", tr.Partitioned())
	}
	if code, body := do("POST", healPath, local); code != http.StatusOK || body != "" || len(tr.Partitioned()) != 0 {
		t.Fatalf("heal: %d %q, transport cut off from %v", code, body, tr.Partitioned())
	}
}
