'use strict';
// A role created through the DataStax Node.js driver logs in and is
// checked.
//
// Usage: node roles.js HOST PORT
//
// Run by test/roles_test.go against a node with PasswordAuthenticator and
// CassandraAuthorizer: cassandra/cassandra creates the role js_user with a
// password, a table, and grants it SELECT on the table; js_user logs in
// with PlainTextAuthProvider, reads the table, and its INSERT fails with
// the server's UNAUTHORIZED (0x2100) and Cassandra's message; LIST ROLES
// shows it. Exits 0 on success, 1 on failure, 2 on bad usage or a missing
// driver.

let cassandra;
try {
  cassandra = require('cassandra-driver');
} catch (e) {
  console.error(`cassandra-driver not loadable (npm ci in ${__dirname}): ${e.message}`);
  process.exit(2);
}

function client(host, port, user, password) {
  return new cassandra.Client({
    contactPoints: [`${host}:${port}`],
    localDataCenter: 'datacenter1',
    authProvider: new cassandra.auth.PlainTextAuthProvider(user, password),
    socketOptions: { connectTimeout: 10000 },
  });
}

async function main() {
  if (process.argv.length !== 4) {
    console.error('usage: node roles.js HOST PORT');
    process.exit(2);
  }
  const [host, port] = [process.argv[2], Number(process.argv[3])];
  const failures = [];
  const admin = client(host, port, 'cassandra', 'cassandra');
  const user = client(host, port, 'js_user', 'js-pw');
  try {
    for (const q of [
      "CREATE KEYSPACE IF NOT EXISTS drivers WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
      'CREATE TABLE IF NOT EXISTS drivers.t (k int PRIMARY KEY, v text)',
      "INSERT INTO drivers.t (k, v) VALUES (1, 'one')",
      "CREATE ROLE js_user WITH PASSWORD = 'js-pw' AND LOGIN = true",
      'GRANT SELECT ON drivers.t TO js_user',
    ]) {
      await admin.execute(q);
    }
    const roles = (await admin.execute('LIST ROLES')).rows.map((r) => r.role);
    console.log(`roles: ${roles}`);
    if (!roles.includes('js_user')) {
      failures.push(`LIST ROLES lacks js_user: ${roles}`);
    }
    const rs = await user.execute('SELECT v FROM drivers.t WHERE k = ?', [1], { prepare: true });
    console.log(`js_user read ${rs.first().v}`);
    if (rs.first().v !== 'one') {
      failures.push(`js_user read ${rs.first().v}`);
    }
    try {
      await user.execute("INSERT INTO drivers.t (k, v) VALUES (2, 'two')");
      failures.push("js_user's INSERT was allowed");
    } catch (e) {
      console.log(`js_user's INSERT: ${e.message} (code 0x${(e.code || 0).toString(16)})`);
      const want = 'User js_user has no MODIFY permission on <table drivers.t> or any of its parents';
      if (e.code !== cassandra.types.responseErrorCodes.unauthorized || e.message !== want) {
        failures.push(`INSERT refused with ${e}, want ${JSON.stringify(want)}`);
      }
    }
  } catch (e) {
    failures.push(`${e}`);
  } finally {
    await user.shutdown();
    await admin.shutdown();
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
