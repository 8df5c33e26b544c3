'use strict';

// res.uncork() under install({ patchEnd: true }) on Node 22 and later
// (lib/chunked-buffer.js): the string chunks Node collected in a tick are
// framed into one _send() (Node 24 and later) or joined before Node's own
// uncork() sends them. Each case runs the same
// handler without the package and under patchEnd, in this process, and
// requires the same bytes (Date masked), the same callbacks in the same
// order with the same arguments, the same write() return values and
// writableLength after each write; and, where Node collected the chunks
// itself, the socket writes counted below Node's by what was framed or
// joined.

const assert = require('node:assert');
const http = require('node:http');
const net = require('node:net');
const { test } = require('node:test');

const fastResponse = require('..');
const { JOINS_CHUNKS, FRAMES_CHUNK } = require('../lib/chunked-buffer');
const { NODE_COLLECTS_TICK_CHUNKS } = require('../lib/node-internals');

const skip = JOINS_CHUNKS ? false : 'Node 18 and 20 (no kChunkedBuffer): write() is the package\'s own there';
// Node 24 and later collect every tick's chunked writes; Node 22 only
// those after a user's res.cork() with the head sent (its write() corks the
// socket, not the response): there the package's write() (lib/stream.js)
// frames the writes of these handlers that are not corked, and the bytes
// are compared, not the counts.

/** Whether Node's own run sent the tick's data as one chunk (asserted where Node collects every tick's). */
function collected(node, pattern) {
  const one = pattern.test(node.bytes);
  if (NODE_COLLECTS_TICK_CHUNKS) assert.ok(one, `Node ${process.version} collected the tick's writes into one chunk`);
  return one;
}

/**
 * Serves one GET with `handler(res, record)` on a fresh server: the
 * response's bytes (Date masked), what the handler recorded, and the
 * writes its socket flushed.
 */
async function run(handler, options = {}) {
  const records = [];
  // The writes the socket's Writable hands on at its flush (_writev()'s
  // chunks, or one _write()): one per socket.write() call. Counted there,
  // not by wrapping socket.write(), which the package steps aside for.
  let socketWrites = 0;
  const server = http.createServer(options, (req, res) => {
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
    // write(), not end(): a client's FIN would end the response early
    // (the server closes its side), before writes on later ticks. The
    // server closes after the response (Connection: close).
    const client = net.connect(server.address().port, '127.0.0.1', () => {
      client.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    const parts = [];
    client.on('data', (d) => parts.push(d));
    client.on('error', reject);
    client.on('close', () => resolve(Buffer.concat(parts).toString('latin1')));
  });
  await new Promise((resolve) => server.close(resolve));
  return { bytes: bytes.replace(/\r\nDate: [^\r]*/, '\r\nDate: -'), records, socketWrites };
}

// The methods writing() and ending() call: 'write' and 'end', or
// 'fastWrite' and 'fastEnd' in the third run.
let writeMethod = 'write';
let endMethod = 'end';

/** The run under `install(options)`, writing() calling `method`; stats() counted over it. */
async function runInstalled(handler, options, installOptions, method) {
  const uninstall = fastResponse.install(installOptions);
  fastResponse.resetStats();
  writeMethod = method;
  endMethod = method === 'fastWrite' ? 'fastEnd' : 'end';
  try {
    const result = await run(handler, options);
    return { ...result, stats: fastResponse.stats() };
  } finally {
    writeMethod = 'write';
    endMethod = 'end';
    uninstall();
  }
}

/**
 * The handler once with Node's own uncork() and write(), once under
 * patchEnd (`fast`), and once after install() with its writes as
 * res.fastWrite() and its end() as res.fastEnd() (`fastWrite`: from Node
 * 24 on fastWrite() schedules the package's uncork() itself, lib/stream.js
 * writeCollected(), and fastEnd() without data flushes the chunks
 * collected in its tick through it, lib/chunked-buffer.js
 * flushCollected()); `options` the server's. The same bytes and records each time.
 */
async function differential(handler, options) {
  const node = await run(handler, options);
  const fast = await runInstalled(handler, options, { patchEnd: true }, 'write');
  assert.equal(fast.bytes, node.bytes);
  assert.deepStrictEqual(fast.records, node.records);
  const fastWrite = await runInstalled(handler, options, {}, 'fastWrite');
  assert.equal(fastWrite.bytes, node.bytes, 'res.fastWrite(): the bytes');
  assert.deepStrictEqual(fastWrite.records, node.records, 'res.fastWrite(): the records');
  return { node, fast, fastWrite };
}

/** end() with a callback recording 'end': res.end(), or res.fastEnd() in the third run. */
function ending(res, record) {
  res[endMethod](() => record('end'));
}

/**
 * write() with what it returned and left recorded, its callback recording
 * `name`, its error and, where Node collects every tick's chunks (24 and
 * later), whether it was called as a plain function (`this` undefined in
 * this strict-mode file), as Node's uncork() calls it. (Node 22's own
 * write() of one chunk in a flush calls it on the socket's queue entry, the
 * package's write() there as a plain function: a known difference, in the
 * README.)
 */
function writing(res, record, name, chunk, encoding) {
  const callback = function callback(err) {
    const how = NODE_COLLECTS_TICK_CHUNKS ? [this === undefined ? 'plain call' : typeof this] : [];
    record('callback', name, err === undefined ? 'undefined' : err, ...how);
  };
  const write = writeMethod;
  const ret = encoding === undefined ? res[write](chunk, callback) : res[write](chunk, encoding, callback);
  record('write', name, ret, res.writableLength, res.writableNeedDrain);
}

test('eight UTF-8 strings in one tick, then end(): one socket write for the chunk where Node makes eleven', { skip }, async () => {
  const { node, fast, fastWrite } = await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    for (let i = 0; i < 8; i++) writing(res, record, `w${i}`, `chunk ${i} \u00e9\u2713 `);
    ending(res, record);
  });
  // Node's uncork() wrote the head with the size line, CRLF, eight chunks,
  // CRLF, then end() the last chunk: 12. Framed: the chunk and the last
  // chunk.
  if (collected(node, /\r\n\r\n[0-9a-f]+\r\n(chunk \d [^\r]*){8}\r\n0\r\n\r\n$/)) {
    assert.equal(node.socketWrites, 12);
    if (FRAMES_CHUNK) {
      // end() under patchEnd, and res.fastEnd() after res.fastWrite(), in
      // the same tick: head, chunk and last chunk written by the addon's
      // one writev(2), no socket write (endCollected()).
      for (const run of [fast, fastWrite]) {
        assert.deepStrictEqual([run.socketWrites, run.stats.fast, run.stats.uncorks], [0, 1, { framed: 0, joined: 0 }]);
      }
    } else {
      assert.equal(fast.socketWrites, 5);
      assert.deepStrictEqual(fast.stats.uncorks, { framed: 0, joined: 1 });
    }
  }
});

test('one write per tick, ASCII and UTF-8: one socket write a tick where Node makes four', { skip }, async () => {
  const chunks = ['data: one\n\n', 'data: caf\u00e9 \u2713\n\n', 'data: \ud83d\ude00\n\n', 'data: four\n\n'];
  const { node, fast, fastWrite } = await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    let i = 0;
    const next = () => {
      writing(res, record, `w${i}`, chunks[i]);
      if (++i < chunks.length) setImmediate(next);
      else setImmediate(() => ending(res, record));
    };
    next();
  });
  assert.match(node.bytes, /\r\n\r\nb\r\ndata: one\n\n\r\n11\r\n[^\r]+\r\nc\r\n[^\r]+\r\nc\r\ndata: four\n\n\r\n0\r\n\r\n$/);
  if (NODE_COLLECTS_TICK_CHUNKS) {
    // Each tick: the size line (with the head, the first), CRLF, the
    // chunk, CRLF; then the last chunk.
    assert.equal(node.socketWrites, 4 * chunks.length + 1);
    // Each tick's chunk written by the addon's writev(2) (writeTick()):
    // only the last chunk, from Node's end() on its own tick, is a socket
    // write.
    assert.equal(fast.socketWrites, 1);
    // res.fastWrite() after install() alone: written by the uncork() it
    // scheduled, counted as the tick's first write and a framed uncork().
    assert.equal(fastWrite.socketWrites, 1);
    assert.deepStrictEqual([fast.stats.writes, fast.stats.uncorks], [0, { framed: chunks.length, joined: 0 }]);
    // (Its res.fastEnd() without data is Node's end(), counted 'no-body'
    // as every fastEnd() without a body.)
    assert.deepStrictEqual([fastWrite.stats.writes, fastWrite.stats.uncorks, fastWrite.stats.fallback],
                           [chunks.length, { framed: chunks.length, joined: 0 }, 1]);
  }
});

test('a head with latin1 bytes beyond ASCII: written natively, or joined with UTF-8 chunks on Node 22', { skip }, async () => {
  for (const chunk of ['plain ', 'caf\u00e9 ']) {
    const { node, fast } = await differential((res, record) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Name': 'caf\u00e9' });
      writing(res, record, 'a', chunk);
      writing(res, record, 'b', chunk, 'utf8');
      ending(res, record);
    });
    // The head's byte 0xe9 as Node writes it (latin1), whatever the chunk.
    assert.ok(node.bytes.includes('X-Name: caf\u00e9\r\n'), 'the head as latin1');
    if (collected(node, /\r\n\r\n[0-9a-f]+\r\n[^\r]*\r\n0\r\n\r\n$/)) {
      // Node: the head with the size line, CRLF, two chunks, CRLF, the last
      // chunk. UTF-8 chunks after a head beyond ASCII are joined instead.
      assert.equal(node.socketWrites, 6);
      // From Node 24 on the addon writes the head as latin1 with either
      // chunk (endCollected()): no socket write.
      assert.equal(fast.socketWrites, FRAMES_CHUNK ? 0 : 5);
    }
  }
});

test('one string past MAX_FRAMED_UNITS in a tick: Node\'s sends, or the addon\'s writev(2) when end() follows', { skip }, async () => {
  for (const size of [16 * 1024, 64 * 1024 + 1]) {
    const { node, fast } = await differential((res, record) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      writing(res, record, 'large', 'L'.repeat(size));
      ending(res, record);
    });
    // One chunk either way: Node 22's own write() frames it with four
    // writes too, and the package's write() there with three.
    assert.match(node.bytes, new RegExp(`\r\n\r\n${size.toString(16)}\r\nL+\r\n0\r\n\r\n$`));
    // Not framed (past MAX_FRAMED_UNITS); within MAX_WRITTEN_BYTES the
    // end() in its tick writes it natively, past it Node's sends.
    if (NODE_COLLECTS_TICK_CHUNKS) assert.equal(fast.socketWrites, size <= 64 * 1024 ? 0 : node.socketWrites);
  }
});

test('writes in one tick past the high-water mark: false, then \'drain\' when the framed chunk is written, as Node', { skip }, async () => {
  const { node } = await differential((res, record) => {
    res.on('drain', () => record('drain', res.writableLength));
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    // Two writes past the socket's high-water mark (1 KiB here), framed
    // together within MAX_FRAMED_UNITS.
    const size = res.writableHighWaterMark / 2 + 100;
    writing(res, record, 'a', 'a'.repeat(size));
    writing(res, record, 'b', 'b'.repeat(size));
    process.nextTick(() => record('next tick'));
    setImmediate(() => ending(res, record));
  }, { highWaterMark: 1024 });
  if (NODE_COLLECTS_TICK_CHUNKS) {
    assert.ok(node.records.some((r) => r[0] === 'write' && r[2] === false), 'a write() returned false');
    assert.deepStrictEqual(node.records.slice(2, 4), [['drain', 0], ['next tick']], 'Node emitted \'drain\' at its uncork()');
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
    ending(res, record);
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

test('surrogate halves written apart in one tick, UTF-8 only: each half as U+FFFD, as Node', { skip }, async () => {
  const { node } = await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    writing(res, record, 'high', 'a\ud83d');
    writing(res, record, 'low', '\ude00b');
    ending(res, record);
  });
  // One chunk from Node 24 on, two before.
  assert.equal(node.bytes.split('\u00ef\u00bf\u00bd').length, 3, 'each half as U+FFFD');
});

test('surrogate halves written apart with an empty chunk between them, UTF-8 only: each half as U+FFFD, as Node', { skip }, async () => {
  const { node } = await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    writing(res, record, 'x', 'x');
    writing(res, record, 'high', 'a\ud83d');
    writing(res, record, 'empty', '');
    writing(res, record, 'low', '\ude00b');
    writing(res, record, 'y', 'y');
    ending(res, record);
  });
  // The framed chunk's check looks past the empty string to the high half.
  assert.equal(node.bytes.split('\u00ef\u00bf\u00bd').length, 3, 'each half as U+FFFD');
});

test('writes across ticks with a nested cork(): framed only where Node sends', { skip }, async () => {
  const { node, fast } = await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.cork();
    writing(res, record, 'a', 'one ');
    writing(res, record, 'b', 'two ');
    res.cork();
    writing(res, record, 'c', 'three ');
    res.uncork();
    record('after inner uncork', res.writableLength);
    // Still corked: one chunk with the three before it.
    writing(res, record, 'between', 'between ');
    res.uncork();
    record('after outer uncork', res.writableLength);
    setImmediate(() => {
      writing(res, record, 'd', 'four ');
      writing(res, record, 'e', 'five');
      ending(res, record);
    });
  });
  // Node: four chunks collected, sent at the outer uncork() (size line
  // with the head, CRLF, four, CRLF); two at end() (five); the last
  // chunk. The package: the addon's writev(2) at the outer uncork()
  // (writeTick()) and at end() (endCollected()), no socket write.
  if (NODE_COLLECTS_TICK_CHUNKS) assert.deepStrictEqual([node.socketWrites, fast.socketWrites], [13, 0]);
});

// fastEnd() after writes in one tick: Node's end() collects a string given
// to it with the tick's chunks and flushes them; the package does both
// before it, with its uncork() (lib/chunked-buffer.js flushCollected()).
const END_SHAPES = {
  'data': ['three'],
  'latin1 data': ['caf\u00e9', 'latin1'],
  'hex data': ['74687265', 'hex'],
  'a Buffer': [Buffer.from('three')],
  'data and a callback that is not one': ['three', 'utf8', 123],
  'an unknown encoding': ['three', 'no-such'],
  'an empty string': [''],
  'data and a callback, _send() wrapped': ['three', () => {}],
};
test('end() after writes in one tick, with each kind of data, after a user\'s cork() twice: Node\'s bytes and errors', { skip }, async () => {
  for (const shape of [...Object.keys(END_SHAPES), 'corked twice', 'callback only']) {
    const { node, fastWrite } = await differential((res, record) => {
      if (shape.endsWith('_send() wrapped')) {
        // What it is called with, as Node's uncork() calls it (a new-user
        // check found end(data, callback)'s encoding undefined, Node's null).
        const send = res._send;
        res._send = function _send(data, encoding, ...rest) {
          record('_send', typeof data === 'string' ? data : `<${data.length} bytes>`, String(encoding));
          return send.call(this, data, encoding, ...rest);
        };
      }
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      if (shape === 'corked twice') {
        res.cork();
        res.cork();
      }
      writing(res, record, 'a', 'one ');
      writing(res, record, 'b', 'two ');
      const args = END_SHAPES[shape];
      if (args === undefined) {
        ending(res, record);
      } else {
        try {
          res[endMethod](...args);
        } catch (err) {
          record('threw', err.code, res.writableCorked, res.socket.writableCorked);
          res.end();
        }
        res.on('finish', () => record('finish'));
      }
      record('ended', res.writableCorked, res.socket.writableCorked, res.writableLength);
    });
    if (collected(node, /\r\n\r\n[0-9a-f]+\r\none two [^\r]*\r\n0\r\n\r\n$/) && FRAMES_CHUNK) {
      // Written by the addon with the head and the last chunk, no socket
      // write (endCollected()): UTF-8 string data, a Buffer, no data. With
      // data in another encoding class (latin1, hex) the two UTF-8 writes
      // joined, the data apart; the end() after Node's
      // ERR_UNKNOWN_ENCODING is Node's; corked twice by the user, framed.
      const uncorks = {
        'latin1 data': { framed: 0, joined: 1 },
        'hex data': { framed: 0, joined: 1 },
        'an unknown encoding': { framed: 0, joined: 0 },
        'corked twice': { framed: 1, joined: 0 },
        // A wrapped _send() sees Node's sends, one per entry.
        'data and a callback, _send() wrapped': { framed: 0, joined: 0 },
      }[shape];
      if (uncorks === undefined) {
        assert.deepStrictEqual([fastWrite.stats.fast, fastWrite.stats.uncorks, fastWrite.socketWrites],
                               [1, { framed: 0, joined: 0 }, 0], shape);
      } else {
        assert.deepStrictEqual([fastWrite.stats.fast, fastWrite.stats.uncorks], [0, uncorks], shape);
        if (uncorks.framed === 1) assert.equal(fastWrite.socketWrites, 2, shape);
      }
    }
  }
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
  // What a wrapper saw, Date masked (the two runs may fall in two seconds).
  const seen = (data) => (typeof data === 'string' ? data.replace(/\r\nDate: [^\r]*/, '\r\nDate: -') :
    `<${data.length} bytes>`);
  for (const [wrap, encodings] of [['_writeRaw', ['utf-8', 'binary']], ['socket.write', ['utf-8', 'binary']],
                                   ['_writeRaw', ['utf8', 'utf8']], ['socket.write', ['utf8', 'utf8']]]) {
    await differential((res, record) => {
      if (wrap === '_writeRaw') {
        const writeRaw = res._writeRaw;
        res._writeRaw = function _writeRaw(data, encoding, ...rest) {
          record('_writeRaw', seen(data), encoding);
          return writeRaw.call(this, data, encoding, ...rest);
        };
      } else {
        const socket = res.socket;
        const write = socket.write;
        socket.write = function wrapped(data, encoding, ...rest) {
          record('socket.write', seen(data), encoding);
          return write.call(this, data, encoding, ...rest);
        };
      }
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      writing(res, record, 'a', 'a1');
      writing(res, record, 'b', 'b1', encodings[0]);
      writing(res, record, 'c', 'c1', encodings[1]);
      writing(res, record, 'd', 'd1', encodings[1] === 'binary' ? 'latin1' : 'utf8');
      ending(res, record);
    });
  }
});

// Found by a new-user check of res.fastWrite() on Node 24+: an unknown
// encoding that is not a string made it cork before Node's write_() threw
// (Node throws before it corks), and a cork() of the user's that does not
// cork was called twice a write (write_() calls it once more when the
// socket is still not corked).
test('an encoding that is a number: Node\'s ERR_UNKNOWN_ENCODING, nothing corked', { skip }, async () => {
  await differential((res, record) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    try {
      res[writeMethod]('a', 123);
    } catch (err) {
      record('threw', err.code, res.writableCorked, res.socket.writableCorked);
    }
    writing(res, record, 'after', 'after the throw');
    record('corked', res.writableCorked, res.socket.writableCorked);
    ending(res, record);
  });
});

test('a cork() of the user\'s that does not cork: called as often as Node calls it', { skip }, async () => {
  await differential((res, record) => {
    res.cork = function cork() {
      record('user cork()', res.writableCorked);
    };
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    writing(res, record, 'a', 'one ');
    writing(res, record, 'b', 'two ');
    setImmediate(() => {
      writing(res, record, 'c', 'three');
      ending(res, record);
    });
  });
});

test('uninstall() puts Node\'s own uncork() back', { skip }, () => {
  const before = http.ServerResponse.prototype.uncork;
  const uninstall = fastResponse.install({ patchEnd: true });
  assert.notEqual(http.ServerResponse.prototype.uncork, before);
  uninstall();
  assert.equal(http.ServerResponse.prototype.uncork, before);
});
