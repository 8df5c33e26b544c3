'use strict';

// res.uncork() under install({ patchEnd: true }) on Node 22 and later
// (lib/chunked-buffer.js): the string chunks Node collected in a tick are
// joined before Node's own uncork() sends them. Each case runs the same
// handler without the package and under patchEnd, in this process, and
// requires the same bytes (Date masked), the same callbacks in the same
// order with the same arguments, the same write() return values and
// writableLength after each write; and, where Node collected the chunks
// itself, the socket writes counted below Node's by what was joined.

const assert = require('node:assert');
const http = require('node:http');
const net = require('node:net');
const { test } = require('node:test');

const fastResponse = require('..');
const { JOINS_CHUNKS } = require('../lib/chunked-buffer');

const skip = JOINS_CHUNKS ? false : 'Node 18 and 20 (no kChunkedBuffer): write() is the package\'s own there';
// Node 24 and later collect every tick's chunked writes; Node 22 only
// those after a user's res.cork() with the head sent (its write() corks the
// socket, not the response): there nothing is collected in these handlers,
// the bytes are compared, not the counts.
const MAJOR = Number(process.versions.node.split('.')[0]);

/** Whether Node's own run sent the tick's data as one chunk (asserted from Node 24 on). */
function collected(node, pattern) {
  const one = pattern.test(node.bytes);
  if (MAJOR >= 24) assert.ok(one, `Node ${process.version} collected the tick's writes into one chunk`);
  return one;
}

/**
 * Serves one GET with `handler(res, record)` on a fresh server: the
 * response's bytes (Date masked), what the handler recorded, and the
 * writes its socket flushed.
 */
async function run(handler) {
  const records = [];
  // The writes the socket's Writable hands on at its flush (_writev()'s
  // chunks, or one _write()): one per socket.write() call. Counted there,
  // not by wrapping socket.write(), which the package steps aside for.
  let socketWrites = 0;
  const server = http.createServer((req, res) => {
    const socket = res.socket;
    const { _writev: writev, _write: write } = socket;
    socket._writev = function _writev(chunks, cb) {
      socketWrites += chunks.length;
      return writev.call(this, chunks, cb);
    };
    socket._write = function _write(data, encoding, cb) {
      socketWrites++;
      return write.call(this, data, encoding, cb);
    };
    handler(res, (...what) => records.push(what));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const bytes = await new Promise((resolve, reject) => {
    const client = net.connect(server.address().port, '127.0.0.1', () => {
      client.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    const parts = [];
    client.on('data', (d) => parts.push(d));
    client.on('error', reject);
    client.on('close', () => resolve(Buffer.concat(parts).toString('latin1')));
  });
  await new Promise((resolve) => server.close(resolve));
  return { bytes: bytes.replace(/\r\nDate: [^\r]*/, '\r\nDate: -'), records, socketWrites };
}

/** The handler once with Node's own uncork() and once under patchEnd. */
async function differential(handler) {
  const node = await run(handler);
  const uninstall = fastResponse.install({ patchEnd: true });
  let fast;
  try {
    fast = await run(handler);
  } finally {
    uninstall();
  }
  assert.equal(fast.bytes, node.bytes);
  assert.deepStrictEqual(fast.records, node.records);
  return { node, fast };
}

/** write() with what it returned and left recorded, its callback recording `name`. */
function writing(res, record, name, chunk, encoding) {
  const callback = (err) => record('callback', name, err === undefined ? 'undefined' : err);
  const ret = encoding === undefined ? res.write(chunk, callback) : res.write(chunk, encoding, callback);
  record('write', name, ret, res.writableLength, res.writableNeedDrain);
}

test('eight UTF-8 strings in one tick, then end(): one socket write for the data where Node makes eight', { skip }, async () => {
  const { node, fast } = await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    for (let i = 0; i < 8; i++) writing(res, record, `w${i}`, `chunk ${i} \u00e9\u2713 `);
    res.end(() => record('end'));
  });
  // Node's uncork() wrote size line, CRLF, eight chunks, CRLF; joined: one.
  if (collected(node, /\r\n\r\n[0-9a-f]+\r\n(chunk \d [^\r]*){8}\r\n0\r\n\r\n$/)) {
    assert.equal(fast.socketWrites, node.socketWrites - 7);
  }
});

test('surrogate halves written apart, an empty chunk, latin1, a Buffer and a 20 Ki string among them: Node\'s bytes', { skip }, async () => {
  const { node, fast } = await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    writing(res, record, 'high', 'a\ud83d');
    writing(res, record, 'empty', '');
    writing(res, record, 'low', '\ude00b');
    writing(res, record, 'latin1 1', 'caf\u00e9 ', 'latin1');
    writing(res, record, 'latin1 2', '\u00ff\u0100 ', 'binary');
    writing(res, record, 'buffer', Buffer.from('bytes '));
    writing(res, record, 'utf-8', 'caf\u00e9 ', 'utf-8');
    writing(res, record, 'large', 'L'.repeat(20 * 1024));
    writing(res, record, 'after large 1', ' x');
    writing(res, record, 'after large 2', ' y');
    res.end(() => record('end'));
  });
  // Joined: the high half with the empty chunk (-1), the latin1 pair (-1),
  // the two after the large string (-1). Apart: the low half (after a high
  // one each is written as U+FFFD, as Node writes them), the Buffer, the
  // UTF-8 string before the large one, the large one.
  if (collected(node, /\r\n\r\n[0-9a-f]+\r\na[^\r]*bytes [^\r]* x y\r\n0\r\n\r\n$/)) {
    assert.equal(fast.socketWrites, node.socketWrites - 3);
    assert.ok(node.bytes.includes('a\u00ef\u00bf\u00bd\u00ef\u00bf\u00bdb'), 'each half as U+FFFD');
  }
});

test('writes across ticks with a nested cork(): joined only where Node sends', { skip }, async () => {
  await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.cork();
    writing(res, record, 'a', 'one ');
    writing(res, record, 'b', 'two ');
    res.cork();
    writing(res, record, 'c', 'three ');
    res.uncork();
    record('after inner uncork', res.writableLength);
    res.uncork();
    record('after outer uncork', res.writableLength);
    setImmediate(() => {
      writing(res, record, 'd', 'four ');
      writing(res, record, 'e', 'five');
      res.end(() => record('end'));
    });
  });
});

test('a response destroyed with its chunks collected: each callback\'s error, as Node', { skip }, async () => {
  await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    writing(res, record, 'a', 'one ');
    writing(res, record, 'b', 'two ');
    res.on('close', () => record('close'));
    res.destroy();
  });
});

// Instrumentation that wraps a response's _writeRaw() (or _send(), or the
// socket's write()) must see what Node's own calls would be, one per
// write(): the package steps aside for it (as 'write-raw-replaced' and
// 'socket-write-replaced' elsewhere).
test('a wrapped _writeRaw() or socket.write() sees Node\'s calls, one per write()', { skip }, async () => {
  for (const wrap of ['_writeRaw', 'socket.write']) {
    await differential((res, record) => {
      if (wrap === '_writeRaw') {
        const writeRaw = res._writeRaw;
        res._writeRaw = function _writeRaw(data, encoding, ...rest) {
          record('_writeRaw', typeof data === 'string' ? data : `<${data.length} bytes>`, encoding);
          return writeRaw.call(this, data, encoding, ...rest);
        };
      } else {
        const socket = res.socket;
        const write = socket.write;
        socket.write = function wrapped(data, encoding, ...rest) {
          record('socket.write', typeof data === 'string' ? data : `<${data.length} bytes>`, encoding);
          return write.call(this, data, encoding, ...rest);
        };
      }
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      writing(res, record, 'a', 'a1');
      writing(res, record, 'b', 'b1', 'utf-8');
      writing(res, record, 'c', 'c1', 'binary');
      writing(res, record, 'd', 'd1', 'latin1');
      res.end(() => record('end'));
    });
  }
});

test('uninstall() puts Node\'s own uncork() back', { skip }, () => {
  const before = http.ServerResponse.prototype.uncork;
  const uninstall = fastResponse.install({ patchEnd: true });
  assert.notEqual(http.ServerResponse.prototype.uncork, before);
  uninstall();
  assert.equal(http.ServerResponse.prototype.uncork, before);
});
