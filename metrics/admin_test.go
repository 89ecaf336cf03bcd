package metrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"golang.org/x/crypto/bcrypt"

	"github.com/cqld/cqld/auth"
	"github.com/cqld/cqld/metrics"
)

// A state-changing endpoint wrapped in RequireLogin asks for a role's
// credentials, refuses wrong ones with PasswordAuthenticator's message,
// and stops checking after too many failures from one address.
func TestRequireLogin(t *testing.T) {
	st, err := auth.OpenStore(auth.StoreOptions{FS: vfs.NewMem(), Dir: "auth", Cost: bcrypt.MinCost})
	if err != nil {
		t.Fatal(err)
	}
	a, err := auth.NewAuthenticator(st.State, st.Cost(), auth.NewLimiter(3, time.Minute, nil))
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	srv := httptest.NewServer(metrics.RequireLogin(a, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { changed++ })))
	defer srv.Close()
	call := func(user, password string, basic bool) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, nil)
		if basic {
			req.SetBasicAuth(user, password)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := call("", "", false); code != http.StatusUnauthorized || !strings.Contains(body, "authentication required") {
		t.Fatalf("no credentials: %d %q", code, body)
	}
	if code, body := call("cassandra", "wrong", true); code != http.StatusUnauthorized || !strings.Contains(body, "Provided username cassandra and/or password are incorrect") || strings.Contains(body, "wrong") {
		t.Fatalf("wrong password: %d %q", code, body)
	}
	if code, _ := call("cassandra", "cassandra", true); code != http.StatusOK || changed != 1 {
		t.Fatalf("good credentials: %d, handler ran %d times", code, changed)
	}
	for range 3 {
		call("cassandra", "wrong", true)
	}
	if code, body := call("cassandra", "cassandra", true); code != http.StatusUnauthorized || !strings.Contains(body, "Too many failed login attempts") {
		t.Fatalf("after repeated failures: %d %q", code, body)
	}
	if metrics.RequireLogin(nil, http.NotFoundHandler()) == nil {
		t.Fatal("no handler without an authenticator")
	}
}
