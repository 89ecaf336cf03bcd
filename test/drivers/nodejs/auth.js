'use strict';
// Logging in with the DataStax Node.js driver's PlainTextAuthProvider.
//
// Usage: node auth.js HOST PORT
//
// Run by test/auth_test.go against a node with PasswordAuthenticator:
// cassandra/cassandra connects and reads system.local; a wrong password and
// no auth provider each fail with the driver's AuthenticationError, the
// first carrying the server's message. Exits 0 on success, 1 on failure, 2
// on bad usage or a missing driver.

let cassandra;
try {
  cassandra = require('cassandra-driver');
} catch (e) {
  console.error(`cassandra-driver not loadable (npm ci in ${__dirname}): ${e.message}`);
  process.exit(2);
}

function client(host, port, authProvider) {
  return new cassandra.Client({
    contactPoints: [`${host}:${port}`],
    localDataCenter: 'datacenter1',
    authProvider,
    socketOptions: { connectTimeout: 10000 },
  });
}

// refused connects and returns the AuthenticationError's message, or why
// the failure was not one.
async function refused(host, port, authProvider) {
  const c = client(host, port, authProvider);
  try {
    await c.connect();
    return 'connected';
  } catch (e) {
    const inner = Object.values(e.innerErrors || {});
    if (inner.length !== 1 || !(inner[0] instanceof cassandra.errors.AuthenticationError)) {
      return `not an AuthenticationError: ${e}`;
    }
    return inner[0].message;
  } finally {
    await c.shutdown();
  }
}

async function main() {
  if (process.argv.length !== 4) {
    console.error('usage: node auth.js HOST PORT');
    process.exit(2);
  }
  const [host, port] = [process.argv[2], Number(process.argv[3])];
  const failures = [];
  const good = client(host, port, new cassandra.auth.PlainTextAuthProvider('cassandra', 'cassandra'));
  try {
    await good.connect();
    const rs = await good.execute("SELECT release_version FROM system.local WHERE key = 'local'");
    console.log(`logged in as cassandra: release_version ${rs.first().release_version}`);
  } catch (e) {
    failures.push(`cassandra/cassandra: ${e}`);
  } finally {
    await good.shutdown();
  }
  for (const [what, provider, want] of [
    ['wrong password', new cassandra.auth.PlainTextAuthProvider('cassandra', 'wrong'),
      'Provided username cassandra and/or password are incorrect'],
    ['no auth provider', undefined, 'requires authentication, but no authenticator found in the options'],
  ]) {
    const got = await refused(host, port, provider);
    console.log(`${what}: ${got}`);
    if (!got.includes(want)) {
      failures.push(`${what}: ${got}, want ${JSON.stringify(want)}`);
    }
  }
  if (failures.length) {
    console.log('FAILED:\n  ' + failures.join('\n  '));
    process.exit(1);
  }
}

main().catch((e) => {
  console.log(`FAILED: ${e.stack}`);
  process.exit(1);
});
