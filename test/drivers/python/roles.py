#!/usr/bin/python3
"""A role created through the DataStax Python driver logs in and is
checked.

Usage: roles.py HOST PORT

Run by test/roles_test.go against a node with PasswordAuthenticator and
CassandraAuthorizer: cassandra/cassandra creates the role py_user with a
password, a table, and grants it SELECT on the table; py_user logs in with
PlainTextAuthProvider, reads the table, and its INSERT fails with
Unauthorized and Cassandra's message; LIST ROLES shows it. Exits 0 on
success, 1 on failure, 2 on bad usage or a missing driver.
"""

import sys

try:
    from cassandra import Unauthorized
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
    from cassandra.policies import DCAwareRoundRobinPolicy
except ImportError as e:  # the Go test checks for this before running us
    print("cassandra driver not importable: %s" % e, file=sys.stderr)
    sys.exit(2)


def cluster(host, port, user, password):
    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy(local_dc="datacenter1"))
    return Cluster(contact_points=[host], port=port, protocol_version=4,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                   auth_provider=PlainTextAuthProvider(username=user, password=password),
                   connect_timeout=10, control_connection_timeout=10)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    host, port = argv[1], int(argv[2])
    failures = []
    admin = cluster(host, port, "cassandra", "cassandra")
    user = cluster(host, port, "py_user", "py-pw")
    try:
        s = admin.connect()
        for q in [
            "CREATE KEYSPACE IF NOT EXISTS drivers WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
            "CREATE TABLE IF NOT EXISTS drivers.t (k int PRIMARY KEY, v text)",
            "INSERT INTO drivers.t (k, v) VALUES (1, 'one')",
            "CREATE ROLE py_user WITH PASSWORD = 'py-pw' AND LOGIN = true",
            "GRANT SELECT ON drivers.t TO py_user",
        ]:
            s.execute(q)
        roles = [r.role for r in s.execute("LIST ROLES")]
        print("roles: %s" % roles)
        if "py_user" not in roles:
            failures.append("LIST ROLES lacks py_user: %s" % roles)

        u = user.connect()
        row = u.execute("SELECT v FROM drivers.t WHERE k = 1").one()
        print("py_user read %r" % row.v)
        if row.v != "one":
            failures.append("py_user read %r" % row.v)
        try:
            u.execute("INSERT INTO drivers.t (k, v) VALUES (2, 'two')")
            failures.append("py_user's INSERT was allowed")
        except Unauthorized as e:
            print("py_user's INSERT: %s" % e)
            want = "User py_user has no MODIFY permission on <table drivers.t> or any of its parents"
            if want not in str(e):
                failures.append("INSERT refused with %s, want %r" % (e, want))
    except Exception as e:  # any other failure is the test failing
        failures.append(repr(e))
    finally:
        user.shutdown()
        admin.shutdown()
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
