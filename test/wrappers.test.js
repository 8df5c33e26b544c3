'use strict';

// Behaviours a fresh-clone review found: the fast path must step aside for
// a server that refuses bodies on 204 (rejectNonStandardBodyWrites), for an
// end() wrapped by someone else (APM) and for a wrapped socket.write().

const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const net = require('node:net');
const fastResponse = require('..');
const { NODE_COLLECTS_TICK_CHUNKS } = require('../lib/node-internals');

function serve(options, handler) {
  return new Promise((resolve) => {
    const server = http.createServer(options, handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

// One GET on a fresh connection; resolves with every byte received.
function get(server) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.address().port, '127.0.0.1');
    const chunks = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('timed out'));
    }, 5000);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1').replace(/Date: [^\r]*\r\n/, 'Date: X\r\n'));
    });
    socket.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });
}

async function run(options, handler) {
  const server = await serve(options, handler);
  try {
    return await get(server);
  } finally {
    server.close();
  }
}

test('rejectNonStandardBodyWrites: a 204 with a body throws ERR_HTTP_BODY_NOT_ALLOWED as res.end does', async () => {
  const errors = [];
  const handler = (end) => (req, res) => {
    res.statusCode = 204;
    try {
      end(res, 'x');
    } catch (err) {
      errors.push(err.code);
      res.destroy();
    }
  };
  const nodeBytes = await run({ rejectNonStandardBodyWrites: true }, handler((res, d) => res.end(d)));
  fastResponse.resetStats();
  const fastBytes = await run({ rejectNonStandardBodyWrites: true }, handler(fastResponse.end));
  assert.deepStrictEqual(errors, ['ERR_HTTP_BODY_NOT_ALLOWED', 'ERR_HTTP_BODY_NOT_ALLOWED']);
  assert.strictEqual(fastBytes, nodeBytes);
  assert.strictEqual(fastBytes, '');
  assert.strictEqual(fastResponse.stats().reasons['body-not-allowed'], 1);
});

test('an end() wrapped after require() (APM) still sees every call, with and without patchEnd', async () => {
  const original = http.ServerResponse.prototype.end;
  let seen = 0;
  http.ServerResponse.prototype.end = function wrappedEnd(...args) {
    seen++;
    return original.apply(this, args);
  };
  try {
    const nodeBytes = await run({}, (req, res) => original.call(res, 'hi'));
    const viaFastEnd = await run({}, (req, res) => fastResponse.end(res, 'hi'));
    assert.strictEqual(seen, 1);
    const uninstall = fastResponse.install({ patchEnd: true });
    try {
      const viaPatch = await run({}, (req, res) => res.end('hi'));
      assert.strictEqual(seen, 2);
      assert.strictEqual(viaPatch, nodeBytes);
    } finally {
      uninstall();
    }
    assert.strictEqual(viaFastEnd, nodeBytes);
  } finally {
    http.ServerResponse.prototype.end = original;
  }
});

test('a wrapped socket.write() sees the response bytes, as with res.end', async () => {
  const handler = (end, counts) => (req, res) => {
    const write = res.socket.write;
    let bytes = 0;
    res.socket.write = function countingWrite(data, ...rest) {
      bytes += typeof data === 'string' ? Buffer.byteLength(data) : data.length;
      return write.call(this, data, ...rest);
    };
    res.on('finish', () => counts.push(bytes));
    end(res, 'hello');
  };
  const counts = [];
  const nodeBytes = await run({}, handler((res, d) => res.end(d), counts));
  fastResponse.resetStats();
  const fastBytes = await run({}, handler(fastResponse.end, counts));
  assert.strictEqual(fastBytes, nodeBytes);
  assert.ok(counts[0] > 0);
  assert.strictEqual(counts[1], counts[0]);
  assert.strictEqual(fastResponse.stats().reasons['socket-write-replaced'], 1);
});

test('a replaced _writeRaw() (byte counting) sees the bytes of end() and write(), as with Node', async () => {
  const proto = http.OutgoingMessage.prototype;
  const writeRaw = proto._writeRaw;
  proto._writeRaw = function countingWriteRaw(data, ...rest) {
    this.counted = (this.counted || 0) + data.length;
    return writeRaw.call(this, data, ...rest);
  };
  try {
    const handler = (api, counts, path) => (req, res) => {
      res.on('finish', () => counts.push(res.counted));
      if (path === '/end') {
        api.end(res, 'hello');
      } else {
        api.write(res, 'hello ');
        api.write(res, Buffer.from('world'));
        res.end();
      }
    };
    const node = { end: (res, d) => res.end(d), write: (res, d) => res.write(d) };
    for (const path of ['/end', '/write']) {
      const counts = [];
      const nodeBytes = await run({}, handler(node, counts, path));
      fastResponse.resetStats();
      const fastBytes = await run({}, handler(fastResponse, counts, path));
      assert.strictEqual(fastBytes, nodeBytes);
      assert.ok(counts[0] > 0);
      assert.strictEqual(counts[1], counts[0], `${path}: _writeRaw() saw ${counts[1]}, with Node ${counts[0]}`);
      // Node 24+: write() is Node's there anyway ('node-combines-chunks').
      const reasons = fastResponse.stats().reasons;
      const reason = path === '/write' && NODE_COLLECTS_TICK_CHUNKS ? 'node-combines-chunks' : 'write-raw-replaced';
      assert.ok(reasons[reason] >= 1, JSON.stringify(reasons));
    }
  } finally {
    proto._writeRaw = writeRaw;
  }
});
