#!/usr/bin/python3
"""Logging in with the DataStax Python driver's PlainTextAuthProvider.

Usage: auth.py HOST PORT

Run by test/auth_test.go against a node with PasswordAuthenticator:
cassandra/cassandra connects and reads system.local; a wrong password, an
unknown user and no auth provider at all each fail with AuthenticationFailed
carrying the server's message. Exits 0 on success, 1 on failure, 2 on bad
usage or a missing driver.
"""

import sys

try:
    from cassandra import AuthenticationFailed
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
    from cassandra.policies import DCAwareRoundRobinPolicy
except ImportError as e:  # the Go test checks for this before running us
    print("cassandra driver not importable: %s" % e, file=sys.stderr)
    sys.exit(2)


def cluster(host, port, auth):
    kwargs = {"auth_provider": auth} if auth else {}
    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy(local_dc="datacenter1"))
    return Cluster(contact_points=[host], port=port, protocol_version=4,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                   connect_timeout=10, control_connection_timeout=10, **kwargs)


def refused(host, port, auth):
    """The message of the AuthenticationFailed the connect fails with."""
    c = cluster(host, port, auth)
    try:
        c.connect()
    except NoHostAvailable as e:
        errs = list(e.errors.values())
        if len(errs) != 1 or not isinstance(errs[0], AuthenticationFailed):
            return "not AuthenticationFailed: %r" % (errs,)
        return str(errs[0])
    finally:
        c.shutdown()
    return "connected"


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    host, port = argv[1], int(argv[2])
    failures = []
    c = cluster(host, port, PlainTextAuthProvider(username="cassandra", password="cassandra"))
    try:
        row = c.connect().execute("SELECT release_version FROM system.local WHERE key = 'local'").one()
        print("logged in as cassandra: release_version %s" % row.release_version)
    except Exception as e:  # any failure to log in is the test failing
        failures.append("cassandra/cassandra: %r" % e)
    finally:
        c.shutdown()
    for what, auth, want in [
        ("wrong password", PlainTextAuthProvider(username="cassandra", password="wrong"),
         "Provided username cassandra and/or password are incorrect"),
        ("unknown user", PlainTextAuthProvider(username="nobody", password="cassandra"),
         "Provided username nobody and/or password are incorrect"),
        ("no auth provider", None, "Remote end requires authentication"),
    ]:
        got = refused(host, port, auth)
        print("%s: %s" % (what, got))
        if want not in got:
            failures.append("%s: %s, want %r" % (what, got, want))
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
