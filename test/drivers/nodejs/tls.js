'use strict';
// Connecting with TLS with the DataStax Node.js driver.
//
// Usage: node tls.js HOST PORT CA_FILE [CERT_FILE KEY_FILE USER PASSWORD]
//
// Run by test/tls_test.go. With three arguments the node wants TLS only:
// the driver connects with sslOptions trusting CA_FILE and reads
// system.local. With seven it also wants a client certificate and a login:
// the driver presents CERT_FILE/KEY_FILE and logs in with
// PlainTextAuthProvider; then a connection without the certificate must
// fail. Exits 0 on success, 1 on failure, 2 on bad usage or a missing
// driver.

const fs = require('fs');
let cassandra;
try {
  cassandra = require('cassandra-driver');
} catch (e) {
  console.error(`cassandra-driver not loadable (npm ci in ${__dirname}): ${e.message}`);
  process.exit(2);
}

function client(host, port, sslOptions, authProvider) {
  return new cassandra.Client({
    contactPoints: [`${host}:${port}`],
    localDataCenter: 'datacenter1',
    sslOptions,
    authProvider,
    socketOptions: { connectTimeout: 10000 },
  });
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length !== 3 && args.length !== 7) {
    console.error('usage: node tls.js HOST PORT CA_FILE [CERT_FILE KEY_FILE USER PASSWORD]');
    process.exit(2);
  }
  const [host, port, caFile] = [args[0], Number(args[1]), args[2]];
  const ssl = { ca: [fs.readFileSync(caFile)], rejectUnauthorized: true };
  let auth;
  if (args.length === 7) {
    ssl.cert = fs.readFileSync(args[3]);
    ssl.key = fs.readFileSync(args[4]);
    auth = new cassandra.auth.PlainTextAuthProvider(args[5], args[6]);
  }
  const failures = [];
  const c = client(host, port, ssl, auth);
  try {
    await c.connect();
    const rs = await c.execute("SELECT release_version FROM system.local WHERE key = 'local'");
    console.log(`connected over TLS: release_version ${rs.first().release_version}`);
  } catch (e) {
    failures.push(`TLS connect: ${e}`);
  } finally {
    await c.shutdown();
  }
  if (ssl.cert) {
    const bare = client(host, port, { ca: ssl.ca, rejectUnauthorized: true }, auth);
    try {
      await bare.connect();
      failures.push('connected without the client certificate the node requires');
    } catch (e) {
      console.log(`without a client certificate: ${e.message}`);
    } finally {
      await bare.shutdown();
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
