package statements

import "slices"

// This file parses the role and permission statements as Cassandra 4.1's
// grammar does (Parser.g: createRoleStatement ... listPermissionsStatement).

// roleName parses IDENT | STRING_LITERAL | QUOTED_NAME |
// unreserved_keyword: unquoted names are lower-cased, strings and quoted
// names kept.
func (p *parser) roleName() string {
	t := p.peek()
	switch {
	case t.kind == tokQMark:
		p.recognitionError("Bind variables cannot be used for role names")
	case t.kind == tokString:
		p.next()
		return t.val
	case isIdentTok(t, identName):
		return p.ident(identName)
	}
	p.noViable()
	return ""
}

// userName parses the old syntax's username: IDENT or STRING_LITERAL,
// both kept as written.
func (p *parser) userName() string {
	t := p.peek()
	switch t.kind {
	case tokIdent:
		p.next()
		return p.src[t.start:t.end]
	case tokString:
		p.next()
		return t.val
	case tokQuotedName:
		p.recognitionError("Quoted strings are are not supported for user names and USER is deprecated, please use ROLE")
	}
	p.noViable()
	return ""
}

// parseCreateRole parses the rest of CREATE ROLE [IF NOT EXISTS] name
// [WITH option (AND option)*].
func (p *parser) parseCreateRole() *CreateRole {
	st := &CreateRole{IfNotExists: p.parseIfNotExists()}
	st.Name, st.Options = p.parseNamedRoleOptions()
	return st
}

// parseAlterRole parses the rest of ALTER ROLE [IF EXISTS] name [WITH ...].
func (p *parser) parseAlterRole() *AlterRole {
	st := &AlterRole{IfExists: p.parseIfExists()}
	st.Name, st.Options = p.parseNamedRoleOptions()
	return st
}

// parseNamedRoleOptions parses name [WITH option (AND option)*].
func (p *parser) parseNamedRoleOptions() (string, RoleOptions) {
	name := p.roleName()
	if !p.accept(kwWith) {
		return name, RoleOptions{}
	}
	return name, p.parseRoleOptions()
}

// parseCreateUser parses the rest of CREATE USER [IF NOT EXISTS] name
// [WITH [HASHED] PASSWORD 'p'] [SUPERUSER | NOSUPERUSER].
func (p *parser) parseCreateUser() *CreateRole {
	st := &CreateRole{User: true, IfNotExists: p.parseIfNotExists()}
	st.Name = p.userName()
	st.Options = p.parseUserOptions()
	login := true
	st.Options.Login = &login
	if st.Options.Superuser == nil {
		no := false
		st.Options.Superuser = &no
	}
	return st
}

// parseAlterUser parses the rest of ALTER USER [IF EXISTS] name [WITH
// [HASHED] PASSWORD 'p'] [SUPERUSER | NOSUPERUSER].
func (p *parser) parseAlterUser() *AlterRole {
	st := &AlterRole{User: true, IfExists: p.parseIfExists()}
	st.Name = p.userName()
	st.Options = p.parseUserOptions()
	return st
}

func (p *parser) parseUserOptions() RoleOptions {
	var o RoleOptions
	if p.accept(kwWith) {
		hashed := p.accept(kwHashed)
		p.expect(kwPassword)
		pw := p.expect(tokString).val
		if hashed {
			o.HashedPassword = &pw
		} else {
			o.Password = &pw
		}
	}
	switch {
	case p.accept(kwSuperuser):
		yes := true
		o.Superuser = &yes
	case p.accept(kwNosuperuser):
		no := false
		o.Superuser = &no
	}
	return o
}

// parseRoleOptions parses option (AND option)*, where option is
// PASSWORD = 'p', HASHED PASSWORD = 'h', OPTIONS = {...}, SUPERUSER = b,
// LOGIN = b, ACCESS TO ALL DATACENTERS or ACCESS TO DATACENTERS {'dc', ...}.
func (p *parser) parseRoleOptions() RoleOptions {
	var o RoleOptions
	seen := map[string]bool{}
	once := func(name string) {
		if seen[name] {
			p.recognitionError("Multiple definition for property '" + name + "'")
		}
		seen[name] = true
	}
	for {
		switch p.kind() {
		case kwPassword, kwHashed:
			name, dst := "PASSWORD", &o.Password
			if p.next().kind == kwHashed {
				p.expect(kwPassword)
				name, dst = "HASHED_PASSWORD", &o.HashedPassword
			}
			once(name)
			p.expect(tokEq)
			v := p.expect(tokString).val
			*dst = &v
		case kwOptions:
			p.next()
			once("OPTIONS")
			p.expect(tokEq)
			o.Options = p.parsePropertyMap()
		case kwSuperuser, kwLogin:
			name, dst := "LOGIN", &o.Login
			if p.next().kind == kwSuperuser {
				name, dst = "SUPERUSER", &o.Superuser
			}
			once(name)
			p.expect(tokEq)
			b := p.expect(tokBoolean).val == "true"
			*dst = &b
		case kwAccess:
			p.next()
			p.expect(kwTo)
			once("ACCESS")
			if p.accept(kwAll) {
				p.expect(kwDatacenters)
				o.AllDatacenters = true
				break
			}
			p.expect(kwDatacenters)
			p.expect(tokLBrace)
			o.Datacenters = []string{p.expect(tokString).val}
			for p.accept(tokComma) {
				o.Datacenters = append(o.Datacenters, p.expect(tokString).val)
			}
			p.expect(tokRBrace)
		default:
			p.noViable()
		}
		if !p.accept(kwAnd) {
			break
		}
	}
	if o.Password != nil && o.HashedPassword != nil {
		p.recognitionError("Options 'password' and 'hashed password' are mutually exclusive")
	}
	return o
}

// parseDropRole parses the rest of DROP ROLE [IF EXISTS] name, or of DROP
// USER.
func (p *parser) parseDropRole(user bool) *DropRole {
	st := &DropRole{User: user, IfExists: p.parseIfExists()}
	if user {
		st.Name = p.userName()
	} else {
		st.Name = p.roleName()
	}
	return st
}

// permissionKeywords are the permissions in Cassandra's order, by keyword.
var permissionKeywords = []tokenKind{kwCreate, kwAlter, kwDrop, kwSelect, kwModify, kwAuthorize, kwDescribe, kwExecute}

// startsPermissions reports whether the statement continues with
// permissionOrAll rather than a role name: a permission keyword (all
// reserved), or ALL followed by PERMISSIONS or ON (a role may be named
// all).
func (p *parser) startsPermissions() bool {
	if slices.Contains(permissionKeywords, p.kind()) {
		return true
	}
	if p.kind() != kwAll {
		return false
	}
	switch p.peekN(1).kind {
	case kwPermissions, kwOn:
		return true
	case tokEOF, tokSemicolon, kwOf, kwNorecursive:
		return true // LIST ALL [OF r] [NORECURSIVE]
	}
	return false
}

// parsePermissions parses ALL [PERMISSIONS] | permission [PERMISSION]
// (',' permission [PERMISSION])*.
func (p *parser) parsePermissions() Permissions {
	if p.accept(kwAll) {
		p.accept(kwPermissions)
		return Permissions{All: true}
	}
	var ps Permissions
	for {
		k := p.kind()
		if !slices.Contains(permissionKeywords, k) {
			p.noViable()
		}
		p.next()
		p.accept(kwPermission)
		name := upperASCII(k.kwName())
		if !slices.Contains(ps.Names, name) {
			ps.Names = append(ps.Names, name)
		}
		if !p.accept(tokComma) {
			return ps
		}
	}
}

func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// parseResource parses ALL KEYSPACES | KEYSPACE ks | [TABLE] [ks.]t |
// ALL ROLES | ROLE r | ALL FUNCTIONS [IN KEYSPACE ks]. A single function
// and MBeans are resources cqld does not have; verb names the statement
// for their refusal.
func (p *parser) parseResource(verb string) AuthResource {
	switch p.kind() {
	case kwAll:
		switch p.peekN(1).kind {
		case kwKeyspaces:
			p.pos += 2
			return AuthResource{Kind: AllKeyspacesResource}
		case kwRoles:
			p.pos += 2
			return AuthResource{Kind: AllRolesResource}
		case kwFunctions:
			p.pos += 2
			if p.kind() != kwIn {
				return AuthResource{Kind: AllFunctionsResource}
			}
			p.next()
			p.expect(kwKeyspace)
			return AuthResource{Kind: KeyspaceFunctionsResource, Keyspace: p.keyspaceName()}
		case kwMbeans:
			p.unsupported(verb + " ON MBEANS")
		}
	case kwKeyspace:
		p.next()
		return AuthResource{Kind: KeyspaceResource, Keyspace: p.keyspaceName()}
	case kwRole:
		if next := p.peekN(1); next.kind == tokString || next.kind == tokQMark || isIdentTok(next, identName) {
			p.next()
			return AuthResource{Kind: RoleResource, Role: p.roleName()}
		}
	case kwFunction:
		// FUNCTION [ks.]f '(' types ')'; a table may be named function.
		if p.peekN(2).kind == tokLParen || p.peekN(2).kind == tokDot && p.peekN(4).kind == tokLParen {
			p.unsupported(verb + " ON FUNCTION")
		}
	case kwMbean, kwMbeans:
		if p.peekN(1).kind == tokString {
			p.unsupported(verb + " ON MBEAN")
		}
	case kwColumnFamily:
		p.next()
	}
	ks, t := p.qualifiedName("table")
	return AuthResource{Kind: TableResource, Keyspace: ks, Table: t}
}

// parseGrantOrRevoke parses GRANT permissions ON resource TO role, GRANT
// role TO role, and the same with REVOKE ... FROM.
func (p *parser) parseGrantOrRevoke() Statement {
	revoke := p.next().kind == kwRevoke
	verb, prep := "GRANT", kwTo
	if revoke {
		verb, prep = "REVOKE", kwFrom
	}
	if p.startsPermissions() {
		perms := p.parsePermissions()
		p.expect(kwOn)
		res := p.parseResource(verb)
		p.expect(prep)
		role := p.roleName()
		if revoke {
			return &RevokePermissions{Permissions: perms, Resource: res, Revokee: role}
		}
		return &GrantPermissions{Permissions: perms, Resource: res, Grantee: role}
	}
	role := p.roleName()
	p.expect(prep)
	other := p.roleName()
	if revoke {
		return &RevokeRole{Role: role, Revokee: other}
	}
	return &GrantRole{Role: role, Grantee: other}
}

// parseList parses LIST ROLES [OF role] [NORECURSIVE], LIST USERS, and
// LIST permissions [ON resource] [OF role] [NORECURSIVE].
func (p *parser) parseList() Statement {
	p.expect(kwList)
	switch p.kind() {
	case kwRoles:
		p.next()
		st := &ListRoles{}
		if p.accept(kwOf) {
			st.Of = p.roleName()
		}
		st.NoRecursive = p.accept(kwNorecursive)
		return st
	case kwUsers:
		p.next()
		return &ListRoles{Users: true}
	case kwSuperusers:
		p.unsupported("LIST SUPERUSERS")
	}
	if !p.startsPermissions() {
		p.noViable()
	}
	st := &ListPermissions{Permissions: p.parsePermissions()}
	if p.accept(kwOn) {
		r := p.parseResource("LIST")
		st.On = &r
	}
	if p.accept(kwOf) {
		st.Of = p.roleName()
	}
	st.NoRecursive = p.accept(kwNorecursive)
	return st
}
