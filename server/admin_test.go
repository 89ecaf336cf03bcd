package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/config"
)

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The admin requests of a node alone under PasswordAuthenticator: they
// take a POST and a superuser's credentials, and a node alone refuses to
// decommission or remove anything with Cassandra's words.
func TestAdminRequests(t *testing.T) {
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Authenticator = "PasswordAuthenticator"
	cfg.NativeTransportPort = freeLoopbackPort(t)
	cfg.PrometheusPort = freeLoopbackPort(t)
	cfg.StoragePort = freeLoopbackPort(t)
	cfg.SeedProvider.Parameters = map[string]string{"seeds": fmt.Sprintf("127.0.0.1:%d", cfg.StoragePort)}
	cfg.DataFileDirectories = []string{dir + "/data"}
	cfg.CommitlogDirectory = dir + "/commitlog"
	cfg.SavedCachesDirectory = dir + "/saved_caches"
	cfg.HintsDirectory = dir + "/hints"
	n, err := StartWith(cfg, slog.New(slog.DiscardHandler), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = n.Shutdown(ctx)
	})
	h, err := n.Auth.Hash("pw")
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Auth.Submit(auth.Change{Op: auth.OpCreateRole, Role: "ops", Set: auth.AttrPassword | auth.AttrLogin, SaltedHash: h, Login: true}); err != nil {
		t.Fatal(err)
	}
	base := "http://" + n.MetricsAddr()
	do := func(method, path, user, password string, form url.Values) (int, AdminError) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var ae AdminError
		_ = json.Unmarshal(body, &ae)
		return resp.StatusCode, ae
	}
	self := n.Info.HostID
	selfID := fmt.Sprintf("%x-%x-%x-%x-%x", self[0:4], self[4:6], self[6:8], self[8:10], self[10:])
	for _, tc := range []struct {
		name, method, path, user, password string
		form                               url.Values
		code                               int
		class, message                     string
	}{
		{"GET", "GET", decommissionPath, "cassandra", "cassandra", nil, http.StatusMethodNotAllowed, "IllegalArgumentException", "use POST"},
		{"no credentials", "POST", decommissionPath, "", "", nil, http.StatusUnauthorized, "SecurityException", "requires authentication"},
		{"wrong password", "POST", decommissionPath, "cassandra", "nope", nil, http.StatusUnauthorized, "SecurityException", "Provided username cassandra and/or password are incorrect"},
		{"not a superuser", "POST", decommissionPath, "ops", "pw", nil, http.StatusUnauthorized, "SecurityException", "Only superusers"},
		{"alone", "POST", decommissionPath, "cassandra", "cassandra", nil, http.StatusConflict, "UnsupportedOperationException", "no other normal nodes in the ring; decommission would be pointless"},
		{"bad host id", "POST", removenodePath, "cassandra", "cassandra", url.Values{"host_id": {"x"}}, http.StatusConflict, "IllegalArgumentException", "Invalid UUID string: x"},
		{"unknown host id", "POST", removenodePath, "cassandra", "cassandra", url.Values{"host_id": {"00000000-0000-0000-0000-000000000001"}}, http.StatusConflict, "UnsupportedOperationException", "Host ID not found."},
		{"self", "POST", removenodePath, "cassandra", "cassandra", url.Values{"host_id": {selfID}}, http.StatusConflict, "UnsupportedOperationException", "Cannot remove self"},
	} {
		code, ae := do(tc.method, tc.path, tc.user, tc.password, tc.form)
		if code != tc.code || ae.Class != tc.class || !strings.Contains(ae.Message, tc.message) {
			t.Errorf("%s: %d %+v, want %d %s %q", tc.name, code, ae, tc.code, tc.class, tc.message)
		}
	}
	resp, err := http.Get(base + netstatsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ns Netstats
	if err := json.NewDecoder(resp.Body).Decode(&ns); err != nil || ns.Mode != "NORMAL" || ns.Progress.Operation != "" {
		t.Fatalf("netstats: %+v %v", ns, err)
	}
}
