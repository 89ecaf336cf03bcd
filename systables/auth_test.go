package systables

import (
	"reflect"
	"testing"
)

// The system_auth tables hold what Cassandra's role manager and authorizer
// write: memberships by granted role, permissions as a set of names by
// role and resource name, and the index of roles by resource.
func TestAuthRows(t *testing.T) {
	s := fakeState{}
	for _, tc := range []struct {
		rows func(State) []Row
		want []Row
	}{
		{roleRows, []Row{
			{"role": "alice", "can_login": true, "is_superuser": false, "member_of": []string{"readers"}, "salted_hash": "$2a$04$hash"},
			{"role": "readers", "can_login": false, "is_superuser": false},
		}},
		{roleMemberRows, []Row{{"role": "readers", "member": "alice"}}},
		{rolePermissionRows, []Row{
			{"role": "readers", "resource": "data/app", "permissions": []string{"SELECT"}},
			{"role": "readers", "resource": "data/app/users", "permissions": []string{"MODIFY", "SELECT"}},
		}},
		{resourceRoleRows, []Row{{"resource": "data/app", "role": "readers"}, {"resource": "data/app/users", "role": "readers"}}},
	} {
		if got := tc.rows(s); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("got %v\nwant %v", got, tc.want)
		}
	}
}
