package replica

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"testing"

	"github.com/cqld/cqld/messaging"
	"github.com/cqld/cqld/mutation"
	"github.com/cqld/cqld/storage"
)

// Every error a Server answers with comes back from a Remote as what a
// Local would have returned, and the failure stays visible.
func TestFailuresMapBack(t *testing.T) {
	peer := netip.MustParseAddrPort("127.0.0.2:7000")
	for _, tc := range []struct {
		err  error
		want error
	}{
		{&UnknownTableError{ID: [16]byte{1, 2}}, ErrUnknownTable},
		{fmt.Errorf("apply: %w", storage.ErrWriteFailed), storage.ErrWriteFailed},
		{context.DeadlineExceeded, context.DeadlineExceeded},
		{context.Canceled, messaging.ErrTimeout},
		{fmt.Errorf("%w: short", ErrBadMessage), ErrBadMessage},
		{fmt.Errorf("%w: op 3", mutation.ErrBadUpdate), ErrBadMessage},
		{fmt.Errorf("%w: key 2", storage.ErrBadPartition), ErrBadMessage},
	} {
		re := toFailure(tc.err).(*messaging.RemoteError)
		re.Peer, re.Verb = peer, messaging.VerbRead
		got := fromRemote(peer, re)
		if !errors.Is(got, tc.want) {
			t.Errorf("%v came back as %v, want %v", tc.err, got, tc.want)
		}
		if _, ok := errors.AsType[*messaging.RemoteError](got); !ok {
			t.Errorf("%v came back without its RemoteError: %v", tc.err, got)
		}
	}
	ute, ok := errors.AsType[*UnknownTableError](fromRemote(peer, toFailure(&UnknownTableError{ID: [16]byte{1, 2}})))
	if !ok || ute.ID != ([16]byte{1, 2}) {
		t.Fatalf("unknown table came back as %v", ute)
	}
	if re := toFailure(errors.New("disk on fire")).(*messaging.RemoteError); re.Code != messaging.FailureUnknown || re.Message != "disk on fire" {
		t.Fatalf("another error answered as %+v", re)
	}
	if err := fromRemote(peer, messaging.ErrUnreachable); !errors.Is(err, messaging.ErrUnreachable) {
		t.Fatalf("a transport error came back as %v", err)
	}
	// A peer without the replica verbs (starting) took nothing: as if it
	// were down.
	noHandler := &messaging.RemoteError{Peer: peer, Verb: messaging.VerbMutation, Code: messaging.FailureNoHandler,
		Message: "no handler for verb MUTATION"}
	if err := fromRemote(peer, noHandler); !errors.Is(err, messaging.ErrUnreachable) {
		t.Fatalf("a peer without the replica verbs came back as %v, want ErrUnreachable", err)
	}
}
