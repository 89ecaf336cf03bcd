'use strict';
// The DataStax Node.js driver against a cqld cluster.
//
// Usage: node cluster.js HOST PORT NODES KEYSPACE METRICS_PORT
//
// Connects with one contact point and checks that the driver discovers
// every node, all up, and that its token map gives each partition of an
// RF 3 keyspace three replicas; then writes and reads rows at QUORUM
// through its default token-aware policy. Then the same at RF 1, where a
// wrong token map would send requests to nodes that forward them: every
// request must be coordinated by the one replica the driver computed, and
// no node may forward a write or a read (the MUTATION and READ messages
// sent, summed over every node's /metrics at METRICS_PORT, stay the same).
// Exits 0 on success, 1 otherwise.
const http = require('http');
const cassandra = require('cassandra-driver');

// forwarded is the MUTATION and READ messages the nodes have sent one another.
async function forwarded(addresses, metricsPort) {
  let n = 0;
  for (const addr of addresses) {
    const body = await new Promise((resolve, reject) => {
      http.get({ host: addr, port: metricsPort, path: '/metrics', timeout: 10000 }, (res) => {
        let data = '';
        res.on('data', (c) => { data += c; });
        res.on('end', () => resolve(data));
      }).on('error', reject);
    });
    for (const line of body.split('\n')) {
      if (line.startsWith('cqld_internode_messages_total{') && line.includes('direction="sent"') &&
          (line.includes('verb="MUTATION"') || line.includes('verb="READ"'))) {
        n += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
    }
  }
  return n;
}

// intKey is an int's routing key: 4 bytes, big-endian.
function intKey(k) {
  const buf = Buffer.alloc(4);
  buf.writeInt32BE(k);
  return buf;
}

async function main() {
  const [host, port, nodes, ks, metricsPort] = process.argv.slice(2);
  const client = new cassandra.Client({
    contactPoints: [host],
    protocolOptions: { port: Number(port) },
    localDataCenter: 'datacenter1',
    queryOptions: { consistency: cassandra.types.consistencies.quorum, prepare: true },
    socketOptions: { readTimeout: 20000 },
  });
  await client.connect();
  const hosts = client.hosts.values();
  if (hosts.length !== Number(nodes) || !hosts.every((h) => h.isUp())) {
    throw new Error(`hosts ${hosts.map((h) => `${h.address} up=${h.isUp()}`)}`);
  }
  await client.execute(`CREATE KEYSPACE ${ks} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`);
  await client.execute(`CREATE TABLE ${ks}.t (k int PRIMARY KEY, v text)`);
  await client.metadata.refreshKeyspace(ks);
  for (let k = 0; k < 50; k++) {
    const replicas = client.getReplicas(ks, intKey(k));
    if (!replicas || replicas.length !== 3) {
      throw new Error(`key ${k}: the driver's token map gives ${replicas && replicas.length} replicas`);
    }
    await client.execute(`INSERT INTO ${ks}.t (k, v) VALUES (?, ?)`, [k, `v${k}`]);
  }
  for (let k = 0; k < 50; k++) {
    const rs = await client.execute(`SELECT v FROM ${ks}.t WHERE k = ?`, [k]);
    if (rs.rowLength !== 1 || rs.rows[0].v !== `v${k}`) {
      throw new Error(`key ${k} read back ${JSON.stringify(rs.rows)}`);
    }
  }
  await client.execute(`DROP KEYSPACE ${ks}`);

  const ks1 = `${ks}_rf1`;
  await client.execute(`CREATE KEYSPACE ${ks1} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`);
  await client.execute(`CREATE TABLE ${ks1}.t (k int PRIMARY KEY, v text)`);
  await client.metadata.refreshKeyspace(ks1);
  const addresses = hosts.map((h) => h.address.split(':')[0]);
  const before = await forwarded(addresses, Number(metricsPort));
  const owners = new Set();
  for (let k = 0; k < 50; k++) {
    const replicas = client.getReplicas(ks1, intKey(k));
    if (!replicas || replicas.length !== 1) {
      throw new Error(`rf1 key ${k}: the driver's token map gives ${replicas && replicas.length} replicas`);
    }
    const owner = replicas[0].address.split(':')[0];
    owners.add(owner);
    const w = await client.execute(`INSERT INTO ${ks1}.t (k, v) VALUES (?, ?)`, [k, `v${k}`]);
    const r = await client.execute(`SELECT v FROM ${ks1}.t WHERE k = ?`, [k]);
    for (const rs of [w, r]) {
      const got = rs.info.queriedHost.split(':')[0];
      if (got !== owner) {
        throw new Error(`rf1 key ${k}: sent to ${got}, not to its replica ${owner}`);
      }
    }
    if (r.rowLength !== 1 || r.rows[0].v !== `v${k}`) {
      throw new Error(`rf1 key ${k} read back ${JSON.stringify(r.rows)}`);
    }
  }
  if (owners.size !== Number(nodes)) {
    throw new Error(`rf1: 50 keys on ${owners.size} of ${nodes} nodes`);
  }
  const sent = (await forwarded(addresses, Number(metricsPort))) - before;
  if (sent !== 0) {
    throw new Error(`rf1: the nodes forwarded ${sent} writes or reads: the driver's replicas are not the server's`);
  }
  await client.execute(`DROP KEYSPACE ${ks1}`);
  await client.shutdown();
  console.log(`ok: ${nodes} nodes discovered, 50 rows written and read at QUORUM, 50 at RF 1 each on its replica`);
}

main().catch((e) => {
  console.error('FAIL:', e.message);
  process.exit(1);
});
