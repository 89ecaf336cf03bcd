'use strict';
// The DataStax Node.js driver against a cqld cluster.
//
// Usage: node cluster.js HOST PORT NODES KEYSPACE
//
// Connects with one contact point and checks that the driver discovers
// every node, all up, and that its token map gives each partition of an
// RF 3 keyspace three replicas; then writes and reads rows at QUORUM
// through its default token-aware policy. Exits 0 on success, 1 otherwise.
const cassandra = require('cassandra-driver');

async function main() {
  const [host, port, nodes, ks] = process.argv.slice(2);
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
    const buf = Buffer.alloc(4); // an int's routing key: 4 bytes, big-endian
    buf.writeInt32BE(k);
    const replicas = client.getReplicas(ks, buf);
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
  await client.shutdown();
  console.log(`ok: ${nodes} nodes discovered, 50 rows written and read at QUORUM`);
}

main().catch((e) => {
  console.error('FAIL:', e.message);
  process.exit(1);
});
