#!/usr/bin/python3
"""Connecting with TLS with the DataStax Python driver.

Usage: tls.py HOST PORT CA_FILE [CERT_FILE KEY_FILE USER PASSWORD]

Run by test/tls_test.go. With three arguments the node wants TLS only: the
driver connects with an ssl_context trusting CA_FILE and reads
system.local. With seven it also wants a client certificate and a login:
the driver presents CERT_FILE/KEY_FILE and logs in with
PlainTextAuthProvider; then a connection without the certificate must
fail. Exits 0 on success, 1 on failure, 2 on bad usage or a missing driver.
"""

import ssl
import sys

try:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile, NoHostAvailable
    from cassandra.policies import DCAwareRoundRobinPolicy
except ImportError as e:  # the Go test checks for this before running us
    print("cassandra driver not importable: %s" % e, file=sys.stderr)
    sys.exit(2)


def context(ca, cert=None, key=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False  # the driver does not pass the host name
    ctx.verify_mode = ssl.CERT_REQUIRED
    ctx.load_verify_locations(ca)
    if cert:
        ctx.load_cert_chain(cert, key)
    return ctx


def cluster(host, port, ctx, auth=None):
    kwargs = {"auth_provider": auth} if auth else {}
    profile = ExecutionProfile(load_balancing_policy=DCAwareRoundRobinPolicy(local_dc="datacenter1"))
    return Cluster(contact_points=[host], port=port, protocol_version=4, ssl_context=ctx,
                   execution_profiles={EXEC_PROFILE_DEFAULT: profile},
                   connect_timeout=10, control_connection_timeout=10, **kwargs)


def main(argv):
    if len(argv) not in (4, 8):
        print(__doc__, file=sys.stderr)
        return 2
    host, port, ca = argv[1], int(argv[2]), argv[3]
    cert = key = auth = None
    if len(argv) == 8:
        cert, key = argv[4], argv[5]
        auth = PlainTextAuthProvider(username=argv[6], password=argv[7])
    failures = []
    c = cluster(host, port, context(ca, cert, key), auth)
    try:
        row = c.connect().execute("SELECT release_version FROM system.local WHERE key = 'local'").one()
        print("connected over TLS: release_version %s" % row.release_version)
    except Exception as e:  # any failure to connect is the test failing
        failures.append("TLS connect: %r" % e)
    finally:
        c.shutdown()
    if cert:
        c = cluster(host, port, context(ca), auth)
        try:
            c.connect()
            failures.append("connected without the client certificate the node requires")
        except NoHostAvailable as e:
            print("without a client certificate: %s" % e)
        finally:
            c.shutdown()
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
