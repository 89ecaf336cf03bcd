package systables

import (
	"slices"

	"github.com/cqld/cqld/auth"
)

// The system_auth tables show the role state as CassandraRoleManager and
// CassandraAuthorizer store it (AuthKeyspace.java). network_permissions
// stays empty: cqld has no network authorizer, and Cassandra's
// AllowAllNetworkAuthorizer writes nothing there either. salted_hash is
// shown as Cassandra shows it, to whoever may SELECT the table (a
// superuser, unless granted): the coordinator checks that permission.

func roleRows(s State) []Row {
	st := s.Roles()
	if st == nil {
		return nil
	}
	var rows []Row
	for _, r := range st.Roles() {
		row := Row{"role": r.Name, "can_login": r.Login, "is_superuser": r.Superuser}
		if len(r.MemberOf) > 0 {
			row["member_of"] = r.MemberOf
		}
		if r.SaltedHash != nil {
			row["salted_hash"] = string(r.SaltedHash)
		}
		rows = append(rows, row)
	}
	return rows
}

// roleMemberRows are the memberships by granted role: (role, member).
func roleMemberRows(s State) []Row {
	st := s.Roles()
	if st == nil {
		return nil
	}
	var rows []Row
	for _, r := range st.Roles() {
		for _, of := range r.MemberOf {
			rows = append(rows, Row{"role": of, "member": r.Name})
		}
	}
	return rows
}

// rolePermissionRows are each role's own permissions, by resource.
func rolePermissionRows(s State) []Row {
	st := s.Roles()
	if st == nil {
		return nil
	}
	var rows []Row
	var cur Row
	for _, g := range st.Grants(nil, nil, auth.AllPermissions) {
		if cur == nil || cur["role"] != g.Role || cur["resource"] != g.Resource.Name() {
			cur = Row{"role": g.Role, "resource": g.Resource.Name(), "permissions": []string{}}
			rows = append(rows, cur)
		}
		cur["permissions"] = append(cur["permissions"].([]string), g.Permission.String())
	}
	for _, r := range rows {
		slices.Sort(r["permissions"].([]string)) // a set's order
	}
	return rows
}

// resourceRoleRows index the roles holding permissions on each resource.
func resourceRoleRows(s State) []Row {
	var rows []Row
	for _, r := range rolePermissionRows(s) {
		rows = append(rows, Row{"resource": r["resource"], "role": r["role"]})
	}
	return rows
}
