package types

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/cqld/cqld/cqlerr"
	"github.com/datastax/go-cassandra-native-protocol/datatype"
	"github.com/datastax/go-cassandra-native-protocol/primitive"
)

// TestValidateDuration is DurationSerializer.validate, with Cassandra's
// messages (DurationTypeTest), and a refusal of vints that run past the
// value.
func TestValidateDuration(t *testing.T) {
	for _, tc := range []struct {
		hex, err string
	}{
		{hex: "000000"},
		{hex: "02040a"},       // 1mo2d5ns
		{hex: "010305"},       // -1mo-2d-3ns
		{hex: "0204c8d0ac00"}, // trailing bytes are Cassandra's to tolerate
		{hex: "", err: "Expected at least 3 bytes for a duration (0)"},
		{hex: "01", err: "Expected at least 3 bytes for a duration (1)"},
		{hex: "ffffff", err: "Invalid duration value: its months, days and nanoseconds need more than its 3 bytes"},
		{hex: "ffffffffffffffffff", err: "Invalid duration value: its months, days and nanoseconds need more than its 9 bytes"},
		{hex: "0000c0", err: "need more than its 3 bytes"},
		{hex: "f0fffffffef0fffffffefffffffffffffffffe"}, // the largest of each
		{hex: "f1000000010000", err: "The duration months must be a 32 bits integer but was: -2147483649"},
		{hex: "00f10000000000", err: "The duration days must be a 32 bits integer but was: 2147483648"},
		{hex: "00f100000000", err: "need more than its 6 bytes"},
		{hex: "040300", err: "The duration months, days and nanoseconds must be all of the same sign (2, -2, 0)"},
		{hex: "0300e03d0900", err: "The duration months, days and nanoseconds must be all of the same sign (-2, 0, 2000000)"},
	} {
		v, _ := hex.DecodeString(tc.hex)
		err := ValidateValue(datatype.Duration, v, "d")
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.hex, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %v, want %q", tc.hex, err, tc.err)
		case err != nil && !isInvalid(err):
			t.Errorf("%s: %T %v, want an INVALID error", tc.hex, err, err)
		}
	}
	// Inside a collection too.
	list := "00000001" + "00000003" + "ffffff"
	v, _ := hex.DecodeString(list)
	if err := ValidateValue(datatype.NewList(datatype.Duration), v, "l"); err == nil {
		t.Error("list of a malformed duration accepted")
	}
}

// isInvalid reports whether err reaches the client as INVALID.
func isInvalid(err error) bool {
	var ce *cqlerr.Error
	return errors.As(err, &ce) && ce.Code == primitive.ErrorCodeInvalid
}
