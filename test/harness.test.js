'use strict';

// The benchmark harness's load shapes (benchmark/_http-benchmarkers.js run()
// with wrk): what the server receives, connection by connection. No timing
// is asserted (BENCHMARKING.md). Needs wrk; skipped without it.

const assert = require('node:assert/strict');
const http = require('node:http');
const { test } = require('node:test');
const benchmarkers = require('../benchmark/_http-benchmarkers');

const skip = !benchmarkers.available('wrk') && 'wrk is not installed (apt-get install wrk)';

/**
 * A server that records, per connection, the Connection field of each
 * request it answers; runs wrk with `load` against it for 1 s.
 */
async function recordLoad(load) {
  const connections = [];
  const server = http.createServer((req, res) => {
    req.socket.seen.push(req.headers.connection ?? null);
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 2 });
    res.end('ok');
  });
  server.on('connection', (socket) => {
    socket.seen = [];
    connections.push(socket.seen);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const result = await benchmarkers.run('wrk', { port: server.address().port, duration: 1, ...load });
    return { result, connections };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('closeAfterBurst: a connection per burst of 16, its last request with Connection: close', { skip },
     async () => {
       const { result, connections } = await recordLoad({ connections: 2, pipeline: 16, closeAfterBurst: true });
       assert.equal(Object.values(result.errors).reduce((a, b) => a + b, 0), 0, JSON.stringify(result.errors));
       // wrk opened a connection for each burst: many more than its 2.
       const used = connections.filter((seen) => seen.length > 0);
       assert.ok(used.length > 10, `${used.length} connections`);
       const full = used.filter((seen) => seen.length === 16);
       // All but the ones wrk was on when its time ran out carried a whole burst.
       assert.ok(full.length >= used.length - 2, `${full.length} of ${used.length} with 16 requests`);
       for (const seen of connections) {
         assert.ok(seen.length <= 16, `a connection carried ${seen.length} requests`);
         for (let i = 0; i < seen.length; i++) assert.equal(seen[i], i === 15 ? 'close' : null);
       }
     });

test('pipeline without closeAfterBurst: the same connections for every burst', { skip }, async () => {
  const { result, connections } = await recordLoad({ connections: 2, pipeline: 16 });
  assert.ok(result.requests > 32, `${result.requests} responses`);
  // (wrk also opens one connection at start-up to check the address, and
  // sends nothing on it.)
  const used = connections.filter((seen) => seen.length > 0);
  assert.equal(used.length, 2);
  for (const seen of used) assert.ok(seen.every((c) => c === null));
});

test('closeAfterBurst needs wrk: autocannon rejects it', async () => {
  await assert.rejects(benchmarkers.run('autocannon', { port: 1, connections: 1, duration: 1, pipeline: 16,
                                                        closeAfterBurst: true }),
                       /autocannon cannot close a connection after each burst: use wrk/);
});
