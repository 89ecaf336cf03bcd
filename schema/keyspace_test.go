package schema

import (
	"errors"
	"fmt"
	"testing"

	"github.com/datastax/go-cassandra-native-protocol/primitive"

	"github.com/cqld/cqld/cqlerr"
)

func TestValidateReplication(t *testing.T) {
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
		{map[string]string{"class": "LocalStrategy"}, nil, primitive.ErrorCodeInvalid},
		{map[string]string{"class": "Bogus"}, nil, primitive.ErrorCodeConfigError},
	} {
		got, err := ValidateReplication("ks", tc.in, nil, []string{"dc1"})
		if tc.code != 0 {
			var ce *cqlerr.Error
			if !errors.As(err, &ce) || ce.Code != tc.code {
				t.Errorf("%v: err %v, want code 0x%04x", tc.in, err, uint32(tc.code))
			}
			continue
		}
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%v: got %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}
