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
  const own = Object.getOwnPropertyDescriptor(http.ServerResponse.prototype, 'end');
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
    if (own === undefined) delete http.ServerResponse.prototype.end;
    else Object.defineProperty(http.ServerResponse.prototype, 'end', own);
  }
});

test('a _storeHeader() an APM wrapped on ServerResponse.prototype after require() sees every head, with fastEnd(), send(), template() and patchEnd, as with Node', async () => {
  const proto = http.ServerResponse.prototype;
  const own = Object.getOwnPropertyDescriptor(proto, '_storeHeader');
  const original = proto._storeHeader;
  const seen = [];
  proto._storeHeader = function _storeHeader(firstLine, headers) {
    seen.push(this.socket ? firstLine : `no server: ${firstLine}`);
    return original.call(this, firstLine, headers);
  };
  const headers = { 'Content-Type': 'text/plain' };
  try {
    const tpl = fastResponse.template(202, headers);
    const plain = [
      await run({}, (req, res) => res.end('hi')),
      await run({}, (req, res) => res.writeHead(201, { ...headers, 'Content-Length': 2 }).end('hi')),
      await run({}, (req, res) => res.writeHead(202, { ...headers, 'Content-Length': 2 }).end('hi')),
    ];
    assert.deepStrictEqual(seen, ['HTTP/1.1 200 OK\r\n', 'HTTP/1.1 201 Created\r\n', 'HTTP/1.1 202 Accepted\r\n']);
    seen.length = 0;
    assert.deepStrictEqual([
      await run({}, (req, res) => fastResponse.end(res, 'hi')),
      await run({}, (req, res) => fastResponse.send(res, 201, headers, 'hi')),
      await run({}, (req, res) => tpl.send(res, 'hi')),
    ], plain);
    assert.deepStrictEqual(seen, ['HTTP/1.1 200 OK\r\n', 'HTTP/1.1 201 Created\r\n', 'HTTP/1.1 202 Accepted\r\n']);
    seen.length = 0;
    const uninstall = fastResponse.install({ patchEnd: true });
    try {
      assert.strictEqual(await run({}, (req, res) => res.end('hi')), plain[0]);
      fastResponse.template(200, headers);
    } finally {
      uninstall();
    }
    assert.deepStrictEqual(seen, ['HTTP/1.1 200 OK\r\n']);
  } finally {
    if (own === undefined) delete proto._storeHeader;
    else Object.defineProperty(proto, '_storeHeader', own);
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

// A wrapper of a prototype method (APM agent) seen by nobody but itself:
// defined as a plain assignment does (own, enumerable), counting its calls.
function wrapMethod(proto, name, calls) {
  const beneath = proto[name];
  proto[name] = function apmWrapper(...args) {
    calls[name] = (calls[name] || 0) + 1;
    return beneath.apply(this, args);
  };
  return proto[name];
}

// A GET on a fresh connection and a POST from http.request(): the bytes the
// client received, the response body the request got back.
async function roundTrip(handler) {
  const server = await serve({}, handler);
  try {
    const bytes = await get(server);
    const body = await new Promise((resolve, reject) => {
      const req = http.request({ port: server.address().port, host: '127.0.0.1', method: 'POST', agent: false },
                               (res) => {
                                 const chunks = [];
                                 res.on('data', (d) => chunks.push(d));
                                 res.on('end', () => resolve(Buffer.concat(chunks).toString()));
                               });
      req.on('error', reject);
      req.end('request body');
    });
    return { bytes, body };
  } finally {
    server.close();
  }
}

const PROTOS = [['ServerResponse', http.ServerResponse.prototype], ['ClientRequest', http.ClientRequest.prototype]];
const NAMES = { ServerResponse: ['end', 'writeHead'], ClientRequest: ['end'] };

function ownDescriptors() {
  return PROTOS.map(([, proto]) => Object.getOwnPropertyDescriptors(proto));
}

// Wraps end() and writeHead() of the response and end() of the request;
// returns the calls they count and a function that puts back end() and
// writeHead() as `saved` (ownDescriptors()) has them.
function wrapAll(saved) {
  const calls = {};
  const wrappers = {};
  for (const [which, proto] of PROTOS) {
    const counted = {};
    calls[which] = counted;
    wrappers[which] = {};
    for (const name of NAMES[which]) wrappers[which][name] = wrapMethod(proto, name, counted);
  }
  const unwrap = () => PROTOS.forEach(([, proto], i) => {
    for (const name of ['end', 'writeHead']) {
      if (saved[i][name] === undefined) delete proto[name];
      else Object.defineProperty(proto, name, saved[i][name]);
    }
  });
  return { calls, wrappers, unwrap };
}

const handler = (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('hi');
  });
};

test('install(), then an APM wraps end() and writeHead(), then install({ patchEnd: true }): the wrappers see every call and come back after uninstall()', async () => {
  const plain = await roundTrip(handler);
  const before = ownDescriptors();
  fastResponse.install();
  const { calls, wrappers, unwrap } = wrapAll(before);
  try {
    fastResponse.install({ patchEnd: true });
    const patched = await roundTrip(handler);
    assert.deepStrictEqual(patched, plain);
    // Two responses (GET and POST), one request.
    assert.deepStrictEqual(calls, { ServerResponse: { end: 2, writeHead: 2 }, ClientRequest: { end: 1 } });
    fastResponse.uninstall();
    for (const [which, proto] of PROTOS) {
      for (const name of NAMES[which]) {
        assert.strictEqual(proto[name], wrappers[which][name], `${which}.prototype.${name} is the wrapper again`);
      }
    }
    assert.deepStrictEqual(await roundTrip(handler), plain);
    assert.deepStrictEqual(calls, { ServerResponse: { end: 4, writeHead: 4 }, ClientRequest: { end: 2 } });
  } finally {
    fastResponse.uninstall();
    unwrap();
  }
  assert.deepStrictEqual(ownDescriptors(), before);
});

test('install({ patchEnd: true }), then an APM wraps end(): uninstall() keeps the wrapper, which then reaches Node\'s own end(); installing again over it does not loop', async () => {
  const plain = await roundTrip(handler);
  const before = ownDescriptors();
  fastResponse.install({ patchEnd: true });
  const { calls, wrappers, unwrap } = wrapAll(before);
  try {
    assert.deepStrictEqual(await roundTrip(handler), plain);
    assert.deepStrictEqual(calls, { ServerResponse: { end: 2, writeHead: 2 }, ClientRequest: { end: 1 } });
    fastResponse.uninstall();
    for (const [which, proto] of PROTOS) {
      assert.strictEqual(proto.end, wrappers[which].end, `${which}.prototype.end: the wrapper stays`);
      assert.strictEqual(proto.fastEnd, undefined);
    }
    fastResponse.resetStats();
    assert.deepStrictEqual(await roundTrip(handler), plain);
    assert.deepStrictEqual(calls, { ServerResponse: { end: 4, writeHead: 4 }, ClientRequest: { end: 2 } });
    // Under the wrapper, the package's end() left behind is Node's own again.
    const counts = fastResponse.stats();
    assert.strictEqual(counts.fast + counts.partial + counts.fallback, 0, JSON.stringify(counts));
    assert.strictEqual(counts.requests.fast + counts.requests.fallback, 0, JSON.stringify(counts.requests));
    // A second install({ patchEnd: true }) stands over the wrapper, which
    // calls the first one's end(): a loop between them would overflow the
    // stack here.
    fastResponse.install({ patchEnd: true });
    assert.deepStrictEqual(await roundTrip(handler), plain);
    assert.deepStrictEqual(calls, { ServerResponse: { end: 6, writeHead: 6 }, ClientRequest: { end: 3 } });
    fastResponse.uninstall();
    for (const [which, proto] of PROTOS) assert.strictEqual(proto.end, wrappers[which].end);
  } finally {
    fastResponse.uninstall();
    unwrap();
  }
  assert.deepStrictEqual(ownDescriptors(), before);
});

test('an APM that wraps end(), write(), writeHead() and uncork() after install({ patchEnd: true }) and unwraps after uninstall(): the next install({ patchEnd: true }) is fast again, and uninstall() leaves the prototypes as they were', async () => {
  const plain = await roundTrip(handler);
  const before = ownDescriptors();
  fastResponse.install({ patchEnd: true });
  // The agent keeps what it wrapped and puts it back on unwrapping (an
  // inherited method: it deletes its own).
  const names = { ServerResponse: ['end', 'write', 'writeHead', 'uncork'], ClientRequest: ['end'] };
  const seen = PROTOS.map(([which, proto]) => names[which].map(
    (name) => (Object.prototype.hasOwnProperty.call(proto, name) ? proto[name] : null)));
  const calls = {};
  PROTOS.forEach(([which, proto]) => {
    calls[which] = {};
    for (const name of names[which]) wrapMethod(proto, name, calls[which]);
  });
  try {
    fastResponse.uninstall();
    PROTOS.forEach(([which, proto], i) => names[which].forEach((name, j) => {
      if (seen[i][j] === null) delete proto[name];
      else proto[name] = seen[i][j];
    }));
    fastResponse.install({ patchEnd: true });
    fastResponse.resetStats();
    assert.deepStrictEqual(await roundTrip(handler), plain);
    assert.strictEqual(fastResponse.stats().fast, 2, JSON.stringify(fastResponse.stats()));
    assert.deepStrictEqual(calls, { ServerResponse: {}, ClientRequest: {} });
  } finally {
    fastResponse.uninstall();
  }
  assert.deepStrictEqual(ownDescriptors(), before);
});

const streamed = (req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.write('streamed ');
    res.write('body');
    res.end();
  });
};

test('write(), writeHead() and uncork() an APM wrapped after install({ patchEnd: true }): uninstall() keeps the wrappers, and the package\'s methods under them are Node\'s', async () => {
  const plain = await roundTrip(streamed);
  const before = ownDescriptors();
  fastResponse.install({ patchEnd: true });
  const calls = {};
  const proto = http.ServerResponse.prototype;
  const wrappers = ['write', 'writeHead', 'uncork'].map((name) => wrapMethod(proto, name, calls));
  try {
    fastResponse.uninstall();
    assert.deepStrictEqual(['write', 'writeHead', 'uncork'].map((name) => proto[name]), wrappers);
    fastResponse.resetStats();
    assert.deepStrictEqual(await roundTrip(streamed), plain);
    const counts = fastResponse.stats();
    assert.deepStrictEqual([counts.writes, counts.heads, counts.uncorks, counts.fast + counts.fallback],
                           [0, 0, { framed: 0, joined: 0 }, 0], JSON.stringify(counts));
    assert.strictEqual(calls.write, 4);
    assert.strictEqual(calls.writeHead, 2);
  } finally {
    for (const name of ['write', 'writeHead', 'uncork']) {
      if (before[0][name] === undefined) delete proto[name];
      else Object.defineProperty(proto, name, before[0][name]);
    }
  }
  assert.deepStrictEqual(ownDescriptors(), before);
});

test('end() and write() an APM wraps on OutgoingMessage.prototype after install({ patchEnd: true }) see every call, as without the package', async () => {
  const OutgoingMessage = Object.getPrototypeOf(http.ServerResponse.prototype);
  const saved = Object.getOwnPropertyDescriptors(OutgoingMessage);
  const wrapped = async (install) => {
    const calls = {};
    if (install) fastResponse.install({ patchEnd: true });
    wrapMethod(OutgoingMessage, 'end', calls);
    wrapMethod(OutgoingMessage, 'write', calls);
    try {
      return { result: await roundTrip(streamed), calls };
    } finally {
      fastResponse.uninstall();
      for (const name of ['end', 'write']) Object.defineProperty(OutgoingMessage, name, saved[name]);
    }
  };
  const plain = await wrapped(false);
  const patched = await wrapped(true);
  // Two responses (GET, POST) of two writes and an end(), one request end().
  assert.deepStrictEqual(plain.calls, { write: 4, end: 3 });
  assert.deepStrictEqual(patched, plain);
});
