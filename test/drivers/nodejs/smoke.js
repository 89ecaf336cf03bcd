'use strict';
// End-to-end smoke test of the DataStax Node.js driver against a cqld node.
//
// Usage: node smoke.js HOST PORT CLUSTER_NAME KEYSPACE
//
// Run by test/nodejs_test.go with the cassandra-driver pinned in
// package.json (npm ci). The driver is used as an application would use it:
// no protocol version (so it negotiates), localDataCenter set. It connects,
// checks the negotiated protocol version and the discovered node, creates a
// keyspace, checks its metadata, USEs it, reads system.local, writes and
// reads a table with a user-defined type, a set and a timestamp through
// prepared statements, runs prepared batches with int parameters and a
// lightweight transaction, connects a second
// client with `keyspace` set (the driver USEs it on connect) and drops the
// keyspace.
//
// Any 'warning' or 'error' the driver logs fails the run, and so does any
// negotiation step beyond the one the driver always takes: it starts at
// DSE_V2 (0x42), which an Apache Cassandra node rejects with "Invalid or
// unsupported protocol version", and then drops to v4, the highest version
// it speaks to Cassandra. A second downgrade, or a reconnect because the
// version changed after reading system.local, is a retry the driver should
// not need.
//
// Exits 0 on success, 1 on failure (printing why and the driver's log), 2 on
// bad usage or a missing driver.

let cassandra;
try {
  cassandra = require('cassandra-driver');
} catch (e) {
  console.error(`cassandra-driver not loadable (npm ci in ${__dirname}): ${e.message}`);
  process.exit(2);
}

const LOCAL_DC = 'datacenter1';
const WANT_PROTOCOL = cassandra.types.protocolVersion.v4;
const WANT_DOWNGRADE = 'Protocol 0x42 not supported, using 0x4';
const MURMUR3 = 'org.apache.cassandra.dht.Murmur3Partitioner';
// SMOKE_VERBOSE=1 prints the driver's log on success too.
const VERBOSE = !!process.env.SMOKE_VERBOSE;

const t0 = Date.now();
const logs = []; // every 'log' event of every client
const failures = [];

function check(ok, what) {
  if (!ok) {
    failures.push(what);
  }
  return ok;
}

function newClient(name, host, port, extra) {
  const client = new cassandra.Client(Object.assign({
    contactPoints: [host],
    protocolOptions: { port },
    localDataCenter: LOCAL_DC,
    socketOptions: { connectTimeout: 10000, readTimeout: 10000 },
  }, extra));
  client.name = name;
  client.on('log', (level, className, message, furtherInfo) => {
    logs.push({ client: name, ms: Date.now() - t0, level, className, message, furtherInfo });
  });
  return client;
}

function hostLine(h) {
  return `${h.address} dc=${h.datacenter} rack=${h.rack} release=${h.cassandraVersion} up=${h.isUp()}`;
}

async function run(host, port, clusterName, ks) {
  const pkg = require('cassandra-driver/package.json');
  console.log(`node ${process.version}, cassandra-driver ${pkg.version}`);

  const client = newClient('client', host, port);
  const clients = [client];
  try {
    const start = Date.now();
    await client.connect();
    const version = client.controlConnection.protocolVersion;
    console.log(`connected in ${Date.now() - start} ms, protocol version ${version}`);
    check(version === WANT_PROTOCOL, `negotiated protocol version ${version}, want ${WANT_PROTOCOL}`);

    const connected = client.getState().getConnectedHosts();
    console.log(`connected hosts: ${connected.map(hostLine).join(', ')}`);
    if (check(connected.length === 1, `${connected.length} connected hosts, want 1`)) {
      const h = connected[0];
      check(h.address === `${host}:${port}`, `host address ${h.address}, want ${host}:${port}`);
      check(h.datacenter === LOCAL_DC, `host datacenter ${h.datacenter}, want ${LOCAL_DC}`);
      check(h.isUp(), `host ${h.address} is not up`);
      check(/^4\./.test(h.cassandraVersion), `host cassandraVersion ${h.cassandraVersion}, want 4.x`);
      check(client.getState().getOpenConnections(h) >= 1, `no open connection to ${h.address}`);
    }
    const all = client.hosts.values();
    check(all.length === 1, `client.hosts has ${all.length} hosts, want 1: ${all.map(hostLine).join(', ')}`);
    const md = client.metadata;
    check(md.keyspaces.system !== undefined, `metadata lacks keyspace system: ${Object.keys(md.keyspaces)}`);

    const created = await client.execute(`CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = ` +
      `{'class': 'SimpleStrategy', 'replication_factor': 1}`);
    // The driver waits for schema agreement and refreshes the keyspace's
    // metadata before execute() resolves.
    check(created.info.isSchemaInAgreement === true, `CREATE KEYSPACE: schema not in agreement`);
    const kmd = md.keyspaces[ks];
    if (check(kmd !== undefined, `metadata lacks keyspace ${ks} after CREATE: ${Object.keys(md.keyspaces)}`)) {
      check(/SimpleStrategy$/.test(kmd.strategy) && String(kmd.strategyOptions.replication_factor) === '1',
        `keyspace ${ks} replication ${kmd.strategy} ${JSON.stringify(kmd.strategyOptions)}`);
      check(kmd.durableWrites === true, `keyspace ${ks} durableWrites ${kmd.durableWrites}`);
    }

    await client.execute(`USE ${ks}`);
    check(client.keyspace === ks, `client keyspace ${client.keyspace} after USE, want ${ks}`);

    const rs = await client.execute(
      `SELECT release_version, partitioner, cluster_name, data_center FROM system.local WHERE key='local'`);
    const row = rs.first();
    console.log(`system.local: release_version=${row.release_version} partitioner=${row.partitioner} ` +
      `cluster_name=${row.cluster_name} data_center=${row.data_center}`);
    check(/^4\./.test(row.release_version), `release_version ${row.release_version}, want 4.x`);
    check(row.partitioner === MURMUR3, `partitioner ${row.partitioner}, want ${MURMUR3}`);
    check(row.cluster_name === clusterName, `cluster_name ${row.cluster_name}, want ${clusterName}`);
    check(row.data_center === LOCAL_DC, `data_center ${row.data_center}, want ${LOCAL_DC}`);

    // An application's tables: a user-defined type, collections and
    // timestamps through prepared statements, the UDT's metadata, and a
    // lightweight transaction.
    await client.execute(`CREATE TYPE IF NOT EXISTS address (street text, zip int)`);
    await client.execute(`CREATE TABLE IF NOT EXISTS people (id int PRIMARY KEY, name text, ` +
      `home frozen<address>, tags set<text>, seen timestamp)`);
    const udt = await md.getUdt(ks, 'address');
    check(udt !== null && udt.fields.map(f => f.name).join(',') === 'street,zip',
      `UDT metadata ${JSON.stringify(udt && udt.fields.map(f => f.name))}, want street,zip`);
    const seen = new Date(1700000000123);
    await client.execute(`INSERT INTO people (id, name, home, tags, seen) VALUES (?, ?, ?, ?, ?)`,
      [1, 'ann', { street: 'Main St', zip: 12345 }, ['b', 'a'], seen], { prepare: true });
    const person = (await client.execute(`SELECT name, home, tags, seen FROM people WHERE id = ?`, [1],
      { prepare: true })).first();
    check(person !== null && person.name === 'ann' && person.home.street === 'Main St' && person.home.zip === 12345 &&
      JSON.stringify(person.tags) === '["a","b"]' && person.seen.getTime() === seen.getTime(),
      `people row 1 read back as ${JSON.stringify(person)}`);
    const lwt1 = await client.execute(`INSERT INTO people (id, name) VALUES (?, ?) IF NOT EXISTS`, [1, 'bob'],
      { prepare: true });
    check(lwt1.wasApplied() === false && lwt1.first().name === 'ann',
      `IF NOT EXISTS on an existing row: applied=${lwt1.wasApplied()} row ${JSON.stringify(lwt1.first())}`);
    const lwt2 = await client.execute(`UPDATE people SET name = ? WHERE id = ? IF name = ?`, ['anne', 1, 'ann'],
      { prepare: true });
    check(lwt2.wasApplied() === true, `UPDATE ... IF name = 'ann' not applied`);

    // A prepared batch with int parameters (issue 17 reported "Expected 4
    // or 0 byte int (8)"): the driver encodes each value by the type in
    // the statement's PREPARED metadata, as for a single EXECUTE.
    await client.execute(`CREATE TABLE IF NOT EXISTS scores (k int, c int, n int, PRIMARY KEY (k, c))`);
    await client.batch([
      { query: `INSERT INTO scores (k, c, n) VALUES (?, ?, ?)`, params: [1, 1, 10] },
      { query: `UPDATE scores SET n = ? WHERE k = ? AND c = ?`, params: [20, 1, 2] },
      { query: `INSERT INTO scores (k, c, n) VALUES (?, ?, ?) USING TTL ?`, params: [2, 1, 30, 1000] },
    ], { prepare: true });
    await client.batch([{ query: `DELETE FROM scores WHERE k = ? AND c = ?`, params: [2, 1] }],
      { prepare: true, logged: false });
    const scores = (await client.execute(`SELECT k, c, n FROM scores`, [], { prepare: true })).rows
      .map(r => `${r.k}/${r.c}/${r.n}`).sort().join(' ');
    check(scores === '1/1/10 1/2/20', `prepared batches left scores ${scores}, want 1/1/10 1/2/20`);

    // An application's usual set-up: the keyspace in the options.
    const client2 = newClient('client2', host, port, { keyspace: ks });
    clients.push(client2);
    await client2.connect();
    check(client2.keyspace === ks, `client2 keyspace ${client2.keyspace}, want ${ks}`);
    const rs2 = await client2.execute(`SELECT cluster_name FROM system.local WHERE key='local'`);
    check(rs2.rowLength === 1, `client2: system.local has ${rs2.rowLength} rows`);

    const dropped = await client.execute(`DROP KEYSPACE ${ks}`);
    check(dropped.info.isSchemaInAgreement === true, `DROP KEYSPACE: schema not in agreement`);
    check(md.keyspaces[ks] === undefined, `metadata still has keyspace ${ks} after DROP`);
  } catch (err) {
    failures.push(`${err.name}: ${err.message}` + (err.innerErrors ? ` ${JSON.stringify(err.innerErrors)}` : ''));
  } finally {
    for (const c of clients) {
      await c.shutdown().catch(err => failures.push(`shutdown: ${err.message}`));
    }
  }

  const downgrades = {};
  for (const l of logs) {
    if (l.level === 'warning' || l.level === 'error') {
      failures.push(`driver logged ${l.level} (${l.client} ${l.className}): ${l.message}` +
        (l.furtherInfo ? ` ${l.furtherInfo}` : ''));
    }
    if (/^Protocol 0x[0-9a-f]+ not supported, using 0x/.test(l.message)) {
      downgrades[l.client] = (downgrades[l.client] || 0) + 1;
      check(l.message === WANT_DOWNGRADE, `${l.client}: protocol downgrade "${l.message}", want "${WANT_DOWNGRADE}"`);
    }
    if (/^Reconnecting since the protocol version changed/.test(l.message)) {
      failures.push(`${l.client}: driver renegotiated: ${l.message}`);
    }
  }
  // Each Client negotiates afresh: exactly one downgrade each.
  for (const name of clients.map(c => c.name)) {
    check(downgrades[name] === 1, `${name}: ${downgrades[name] || 0} protocol downgrades, want 1`);
  }
}

const [host, portArg, clusterName, ks] = process.argv.slice(2);
if (!ks) {
  console.error('usage: node smoke.js HOST PORT CLUSTER_NAME KEYSPACE');
  process.exit(2);
}

function dumpLog(out) {
  out('driver log:');
  for (const l of logs) {
    out(`  ${String(l.ms).padStart(6)}ms ${l.client.padEnd(7)} ${l.level.padEnd(7)} ${l.className}: ${l.message}` +
      (l.furtherInfo ? ` ${l.furtherInfo}` : ''));
  }
}

run(host, Number(portArg), clusterName, ks).then(() => {
  if (failures.length === 0) {
    if (VERBOSE) {
      dumpLog(console.log);
    }
    console.log('OK');
    process.exit(0);
  }
  console.error('FAIL');
  for (const f of failures) {
    console.error(`  ${f}`);
  }
  dumpLog(console.error);
  process.exit(1);
}, err => {
  console.error(`FAIL: ${err.stack}`);
  process.exit(1);
});
