package coordinator

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/message"
	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/protocol"
	"github.com/cqld/cqld/statements"
)

// TestErrorMessageCoversEveryCode checks that every error the coordinator
// makes reaches the client with its own code, wrapped or not, and that
// errors from other layers map as documented.
func TestErrorMessageCoversEveryCode(t *testing.T) {
	_, _, syntaxErr := statements.Parse("SELEC x")
	_, _, unsupported := statements.Parse("CREATE ROLE r")
	cases := []struct {
		err  error
		code primitive.ErrorCode
	}{
		{invalidf("x"), primitive.ErrorCodeInvalid},
		{configErrorf("x"), primitive.ErrorCodeConfigError},
		{unauthorizedf("x"), primitive.ErrorCodeUnauthorized},
		{protocolErrorf("x"), primitive.ErrorCodeProtocolError},
		{keyspaceExists("ks"), primitive.ErrorCodeAlreadyExists},
		{unprepared([]byte{1, 2}), primitive.ErrorCodeUnprepared},
		{&cqlError{Code: primitive.ErrorCodeSyntaxError, Msg: "x"}, primitive.ErrorCodeSyntaxError},
		{&cqlError{Code: primitive.ErrorCodeOverloaded, Msg: "x"}, primitive.ErrorCodeOverloaded},
		{syntaxErr, primitive.ErrorCodeSyntaxError},
		{unsupported, primitive.ErrorCodeInvalid},
		{errors.New("disk on fire"), primitive.ErrorCodeServerError},
	}
	for _, tc := range cases {
		for _, err := range []error{tc.err, fmt.Errorf("context: %w", tc.err)} {
			m := errorMessage(err)
			if m.GetErrorCode() != tc.code {
				t.Errorf("%v: code 0x%04x, want 0x%04x", err, uint32(m.GetErrorCode()), uint32(tc.code))
			}
			if m.GetErrorMessage() == "" {
				t.Errorf("%v: empty message", err)
			}
		}
	}
	if m := errorMessage(keyspaceExists("ks")).(*message.AlreadyExists); m.Keyspace != "ks" || m.Table != "" {
		t.Errorf("ALREADY_EXISTS carries %q.%q", m.Keyspace, m.Table)
	}
	if m := errorMessage(unprepared([]byte{1, 2})).(*message.Unprepared); string(m.Id) != "\x01\x02" {
		t.Errorf("UNPREPARED carries id %x", m.Id)
	}
}

func TestValidateReplication(t *testing.T) {
	c := &Coordinator{opts: Options{DataCenter: "dc1"}}
	for _, tc := range []struct {
		in   map[string]string
		want map[string]string
		code primitive.ErrorCode
	}{
		{map[string]string{"class": "SimpleStrategy", "replication_factor": "3"},
			map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "3"}, 0},
		{map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "2", "dc2": "1"},
			map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "2", "dc2": "1"}, 0},
		{map[string]string{"class": "NetworkTopologyStrategy", "replication_factor": "3"},
			map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "3"}, 0},
		{map[string]string{"replication_factor": "3"}, nil, primitive.ErrorCodeConfigError},
		{map[string]string{"class": "SimpleStrategy"}, nil, primitive.ErrorCodeConfigError},
		{map[string]string{"class": "SimpleStrategy", "replication_factor": "x"}, nil, primitive.ErrorCodeConfigError},
		{map[string]string{"class": "NetworkTopologyStrategy", "dc1": "-1"}, nil, primitive.ErrorCodeConfigError},
		{map[string]string{"class": "LocalStrategy"}, nil, primitive.ErrorCodeConfigError},
		{map[string]string{"class": "Bogus"}, nil, primitive.ErrorCodeConfigError},
	} {
		got, err := c.validateReplication("ks", tc.in)
		if tc.code != 0 {
			if err == nil || errorMessage(err).GetErrorCode() != tc.code {
				t.Errorf("%v: err %v, want code 0x%04x", tc.in, err, uint32(tc.code))
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%v: got %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

// A panic while running a request is answered as a SERVER_ERROR on its
// stream, on a worker and on the event loop alike, instead of ending the
// process.
func TestPanicAnswersServerError(t *testing.T) {
	c := &Coordinator{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	req := &protocol.Request{Version: primitive.ProtocolVersion4, Message: &message.Query{Query: "SELECT"}}
	check := func(name string, resp *protocol.Response) {
		t.Helper()
		se, ok := resp.Message.(*message.ServerError)
		if !ok || !strings.Contains(se.ErrorMessage, "boom") {
			t.Fatalf("%s: answered %#v, want a SERVER_ERROR naming the panic", name, resp.Message)
		}
	}
	check("worker", func() (resp *protocol.Response) {
		defer c.recoverRequest(req, &resp)
		panic("boom")
	}())
	resp, taken := func() (resp *protocol.Response, taken bool) {
		defer c.recoverInline(req, &resp, &taken)
		panic("boom")
	}()
	if !taken {
		t.Fatal("a request that panicked inline was not taken")
	}
	check("inline", resp)
}
