'use strict';

// Edge behaviours, each pinned by a differential test: the same scenario runs
// on a fresh server once with Node's own `res.end()` and once with
// `res.fastEnd()`; the raw bytes the client receives (Date masked), the
// connection's end, and everything the handler logs (events, callbacks,
// errors, response state, diagnostics_channel messages, AsyncLocalStorage
// stores) must be equal. Where the fast path is expected to write the
// response itself, the stats() delta of the fast run says so.

const assert = require('node:assert/strict');
const { AsyncLocalStorage } = require('node:async_hooks');
const diagnosticsChannel = require('node:diagnostics_channel');
const nodeTest = require('node:test');

const { before, after } = nodeTest;

const fastResponse = require('..');
const h = require('./matrix-harness');

const { http } = h;
const nodeEnd = http.ServerResponse.prototype.end;

// With FAST_RESPONSE_TEST_BAIL=1 (scripts/mutation-check.js) the tests after
// a failure fail at once instead of running (nothing is skipped).
let failed = false;
function test(name, fn) {
  nodeTest.test(name, async () => {
    if (h.BAIL && failed) throw new Error('not run after an earlier failure (bail)');
    try {
      await fn();
    } catch (err) {
      failed = true;
      throw err;
    }
  });
}

before(() => fastResponse.install());
after(() => fastResponse.uninstall());

const GET = 'GET /a HTTP/1.1\r\nHost: t\r\n\r\n';
const GET_CLOSE = 'GET /a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n';
const HEAD_CLOSE = 'HEAD /a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n';

function settle() {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * Runs `scenario` on one side ('node' or 'fast'):
 *   handler(req, res, ctx)  on 'request' (or `scenario.event`)
 *   setup(server)           before listening
 *   request / sequence / onConnect / onData / followUp   the client
 * `ctx.end(res, ...args)` is Node's end() or fastEnd(); `ctx.log(...)`
 * records; every response's 'prefinish', 'finish', 'close' and 'error' are
 * logged (with the response's number) and awaited.
 */
async function runSide(kind, scenario) {
  const log = [];
  const closed = [];
  let count = 0;
  // The responses the scenario makes the server handle (default 1): the
  // server may see a request only after the client is gone.
  const wanted = scenario.responses ?? 1;
  let allSeen;
  const seen = new Promise((resolve) => {
    allSeen = resolve;
  });
  const server = http.createServer(scenario.serverOptions || {});
  const ctx = {
    kind,
    server,
    log(...items) {
      log.push(items.length === 1 ? items[0] : items);
    },
    end(res, ...args) {
      return kind === 'node' ? nodeEnd.apply(res, args) : res.fastEnd(...args);
    },
    /**
     * Calls ctx.end and logs the return value or the error thrown; returns
     * false when it threw.
     */
    tryEnd(res, ...args) {
      try {
        ctx.log('returned', ctx.end(res, ...args) === res ? 'res' : 'other');
        return true;
      } catch (err) {
        ctx.log('threw', h.errorInfo(err));
        return false;
      }
    },
    snapshot(label, res) {
      ctx.log(label, h.snapshot(res));
    },
    track(res) {
      const n = count++;
      res.fastResponseTestNumber = n;
      if (count === wanted) allSeen();
      res.on('prefinish', () => log.push([n, 'prefinish']));
      res.on('finish', () => log.push([n, 'finish', h.snapshot(res)]));
      res.on('error', (err) => log.push([n, 'error', h.errorInfo(err)]));
      closed.push(new Promise((resolve) => res.on('close', () => {
        log.push([n, 'close']);
        resolve();
      })));
      return n;
    },
  };
  if (scenario.setup) scenario.setup(server, ctx);
  const listener = (req, res) => {
    if (h.handleSentinel(req, res, nodeEnd)) return;
    ctx.track(res);
    scenario.handler(req, res, ctx);
  };
  server.on(scenario.event || 'request', listener);
  if (scenario.event !== undefined) server.on('request', (req, res) => h.handleSentinel(req, res, nodeEnd));
  const port = await h.listen(server);
  const statsBefore = fastResponse.stats();
  let client;
  try {
    client = await h.exchange(port, scenario.request, {
      sequence: scenario.sequence,
      followUp: scenario.followUp,
      onConnect: scenario.onConnect,
      onData: scenario.onData,
    });
    if (wanted > 0) await h.withTimeout(seen, 10000, `${wanted} ${kind} response(s)`);
    await h.withTimeout(Promise.all(closed), 10000, `'close' of every ${kind} response`);
    if (scenario.waitFor) await h.withTimeout(scenario.waitFor(ctx), 10000, 'scenario.waitFor');
    await settle();
  } finally {
    await h.closeServer(server);
  }
  return {
    bytes: client.bytes.toString('latin1'),
    end: client.end,
    sentinel: client.sentinel,
    log,
    delta: h.statsDelta(statsBefore, fastResponse.stats()),
  };
}

/**
 * Both sides, compared. Returns `{ node, fast }` for further assertions.
 * `expectFast`: the number of responses the fast path must have written.
 */
async function differential(scenario) {
  const node = await runSide('node', scenario);
  const fast = await runSide('fast', scenario);
  assert.equal(node.delta.fast + node.delta.partial + node.delta.fallback, 0);
  assert.deepEqual(fast.log, node.log, 'server-side log');
  assert.equal(fast.bytes, node.bytes, 'bytes received');
  assert.equal(fast.end, node.end, 'connection end');
  assert.equal(fast.sentinel, node.sentinel, 'sentinel');
  if (scenario.expectFast !== undefined) {
    assert.equal(fast.delta.fast + fast.delta.partial, scenario.expectFast,
                 `fast writes: ${JSON.stringify(fast.delta)}`);
  }
  return { node, fast };
}

function logged(result, name) {
  return result.log.filter((e) => Array.isArray(e) && e[0] === name);
}

// ---------------------------------------------------------------------------
// strictContentLength

test('strictContentLength with a matching Content-Length field', async () => {
  await differential({
    request: GET_CLOSE,
    handler(req, res, ctx) {
      res.strictContentLength = true;
      res.setHeader('Content-Length', '5');
      // Node 18 compares the field's string with the byte count and throws
      // (leaving the socket corked): then the response is destroyed.
      if (!ctx.tryEnd(res, 'hello', () => ctx.log('callback'))) res.destroy();
    },
  });
});

test('strictContentLength with the length taken from the body', async () => {
  await differential({
    request: GET,
    handler(req, res, ctx) {
      res.strictContentLength = true;
      ctx.tryEnd(res, 'héllo', () => ctx.log('callback'));
    },
  });
});

test('strictContentLength mismatch: the same ERR_HTTP_CONTENT_LENGTH_MISMATCH', async () => {
  const { node } = await differential({
    request: GET,
    followUp: 'none',
    handler(req, res, ctx) {
      res.strictContentLength = true;
      res.setHeader('Content-Length', '10');
      ctx.tryEnd(res, 'hello', () => ctx.log('callback'));
      ctx.snapshot('after throw', res);
      // Node leaves the socket corked after this throw: nothing would ever
      // be sent, so the response is destroyed.
      res.destroy();
    },
  });
  const threw = logged(node, 'threw');
  assert.equal(threw.length, 1);
  assert.equal(threw[0][1].code, 'ERR_HTTP_CONTENT_LENGTH_MISMATCH');
});

test('strictContentLength mismatch before the head is rendered (writeHead-free, too short a body)', async () => {
  await differential({
    request: GET_CLOSE,
    handler(req, res, ctx) {
      res.strictContentLength = true;
      res.setHeader('Content-Length', '3');
      ctx.tryEnd(res, 'hello', () => ctx.log('callback'));
      ctx.snapshot('after throw', res);
      res.destroy();
    },
  });
});

test('strictContentLength mismatch after writeHead(), too long a body', async () => {
  const { node } = await differential({
    request: GET_CLOSE,
    handler(req, res, ctx) {
      res.strictContentLength = true;
      res.writeHead(200, { 'Content-Length': '3' });
      ctx.tryEnd(res, Buffer.from('hello'), () => ctx.log('callback'));
      ctx.snapshot('after throw', res);
      res.destroy();
    },
  });
  assert.equal(logged(node, 'threw')[0][1].code, 'ERR_HTTP_CONTENT_LENGTH_MISMATCH');
});

// ---------------------------------------------------------------------------
// Content-Length set by the user that differs from the body

for (const [name, length, body] of [
  ['shorter than the body', '3', 'hello'],
  ['longer than the body', '10', 'hello'],
  ['of a multi-byte body counted in characters', '5', 'héllo'],
]) {
  test(`user Content-Length ${name} (setHeader)`, async () => {
    await differential({
      request: GET_CLOSE,
      expectFast: 1,
      handler(req, res, ctx) {
        res.setHeader('Content-Length', length);
        ctx.tryEnd(res, body, () => ctx.log('callback'));
      },
    });
  });
}

test('user Content-Length differs from the body (writeHead)', async () => {
  await differential({
    request: GET_CLOSE,
    handler(req, res, ctx) {
      res.writeHead(200, { 'Content-Length': 2 });
      ctx.tryEnd(res, 'hello', () => ctx.log('callback'));
    },
  });
});

test('user Content-Length on a HEAD response with a body given', async () => {
  await differential({
    request: HEAD_CLOSE,
    expectFast: 1,
    handler(req, res, ctx) {
      res.setHeader('Content-Length', '1234');
      ctx.tryEnd(res, 'hello', () => ctx.log('callback'));
    },
  });
});

// ---------------------------------------------------------------------------
// Date

test("removeHeader('Date')", async () => {
  const { node } = await differential({
    request: GET,
    expectFast: 1,
    handler(req, res, ctx) {
      res.removeHeader('Date');
      ctx.tryEnd(res, 'no date', () => ctx.log('callback'));
    },
  });
  assert.doesNotMatch(node.bytes.split('\r\n\r\n')[0], /\r\ndate:/i);
});

test('sendDate = false', async () => {
  const { node } = await differential({
    request: GET,
    expectFast: 1,
    handler(req, res, ctx) {
      res.sendDate = false;
      ctx.tryEnd(res, 'no date', () => ctx.log('callback'));
    },
  });
  assert.doesNotMatch(node.bytes.split('\r\n\r\n')[0], /\r\ndate:/i);
});

test('a Date field set by the user', async () => {
  await differential({
    request: GET,
    expectFast: 1,
    handler(req, res, ctx) {
      res.setHeader('Date', 'Thu, 01 Jan 1970 00:00:00 GMT');
      ctx.tryEnd(res, 'fixed date');
    },
  });
});

// ---------------------------------------------------------------------------
// server.maxRequestsPerSocket

function requestN(n) {
  return `GET /r${n} HTTP/1.1\r\nHost: t\r\n\r\n`;
}

// Node answers the last allowed request with `Connection: close` but leaves
// the closing to the client (it does not set `_last`): the client closes.
test('maxRequestsPerSocket: Connection: close on the last allowed request (sequential)', async () => {
  const { node } = await differential({
    sequence: [requestN(1), requestN(2), requestN(3), requestN(4)],
    responses: 3,
    followUp: 'half-close-always',
    expectFast: 3,
    setup(server) {
      server.maxRequestsPerSocket = 3;
    },
    handler(req, res, ctx) {
      ctx.tryEnd(res, `body of ${req.url}`);
    },
  });
  assert.equal(node.bytes.match(/HTTP\/1\.1 200 /g).length, 3);
  assert.match(node.bytes, /Connection: close\r\n/);
});

test('maxRequestsPerSocket: 503 for the request after the last allowed one (pipelined)', async () => {
  const { node } = await differential({
    request: requestN(1) + requestN(2) + requestN(3) + requestN(4),
    responses: 3,
    followUp: 'half-close-always',
    setup(server, ctx) {
      server.maxRequestsPerSocket = 3;
      server.on('dropRequest', (req) => ctx.log('dropRequest', req.url));
    },
    handler(req, res, ctx) {
      ctx.tryEnd(res, `body of ${req.url}`);
    },
  });
  assert.match(node.bytes, /HTTP\/1\.1 503 /);
  assert.equal(logged(node, 'dropRequest').length, 1);
});

test('maxRequestsPerSocket: 503 after the last allowed request on a keep-alive connection', async () => {
  await differential({
    request: requestN(1) + requestN(2),
    followUp: 'half-close-always',
    expectFast: 1,
    setup(server, ctx) {
      server.maxRequestsPerSocket = 1;
      server.on('dropRequest', (req) => ctx.log('dropRequest', req.url));
    },
    handler(req, res, ctx) {
      ctx.tryEnd(res, `body of ${req.url}`);
    },
  });
});

// ---------------------------------------------------------------------------
// server.keepAliveTimeout

for (const timeout of [2500, 999, 1500.7, 0, 5000, 65000.5]) {
  test(`keepAliveTimeout = ${timeout}`, async () => {
    await differential({
      request: GET + GET,
      responses: 2,
      expectFast: 1,
      setup(server) {
        server.keepAliveTimeout = timeout;
      },
      handler(req, res, ctx) {
        ctx.tryEnd(res, 'keep-alive');
      },
    });
  });
}

test('keepAliveTimeout = 1500.7 with maxRequestsPerSocket = 7', async () => {
  await differential({
    request: GET,
    expectFast: 1,
    setup(server) {
      server.keepAliveTimeout = 1500.7;
      server.maxRequestsPerSocket = 7;
    },
    handler(req, res, ctx) {
      ctx.tryEnd(res, 'keep-alive');
    },
  });
});

// ---------------------------------------------------------------------------
// Expect: 100-continue

const EXPECT_HEAD = 'POST /upload HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n';

test('Expect: 100-continue without a checkContinue listener', async () => {
  await differential({
    request: EXPECT_HEAD + 'body',
    handler(req, res, ctx) {
      ctx.tryEnd(res, 'accepted', () => ctx.log('callback'));
    },
  });
});

test('Expect: 100-continue, body sent after the 100 arrives', async () => {
  let bodySent;
  await differential({
    onConnect(socket) {
      bodySent = false;
      socket.write(EXPECT_HEAD);
    },
    onData(socket, bytes) {
      if (!bodySent && bytes.includes('HTTP/1.1 100 Continue\r\n\r\n')) {
        bodySent = true;
        socket.write('body');
      }
    },
    handler(req, res, ctx) {
      let body = '';
      req.setEncoding('latin1');
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => ctx.tryEnd(res, `got ${body}`, () => ctx.log('callback')));
    },
  });
});

test('Expect: 100-continue with checkContinue: writeContinue() then end()', async () => {
  await differential({
    request: EXPECT_HEAD + 'body',
    event: 'checkContinue',
    handler(req, res, ctx) {
      res.writeContinue();
      ctx.tryEnd(res, 'continued', () => ctx.log('callback'));
    },
  });
});

for (const status of [200, 417]) {
  test(`Expect: 100-continue with checkContinue: ${status} without writeContinue()`, async () => {
    await differential({
      request: EXPECT_HEAD + 'body',
      event: 'checkContinue',
      handler(req, res, ctx) {
        res.statusCode = status;
        ctx.tryEnd(res, 'final status without 100', () => ctx.log('callback'));
        ctx.snapshot('after end', res);
      },
    });
  });
}

// ---------------------------------------------------------------------------
// The socket gone

test('res.end() right after the socket was destroyed', async () => {
  await differential({
    request: GET,
    followUp: 'none',
    handler(req, res, ctx) {
      req.socket.destroy();
      ctx.tryEnd(res, 'too late', (...args) => ctx.log('callback', args.map(h.errorInfo)));
      ctx.snapshot('after end', res);
    },
  });
});

test("res.end() in the response's 'close' after the socket was destroyed", async () => {
  await differential({
    request: GET,
    followUp: 'none',
    handler(req, res, ctx) {
      res.on('close', () => {
        ctx.tryEnd(res, 'too late', (...args) => ctx.log('callback', args.map(h.errorInfo)));
        ctx.snapshot('after end', res);
      });
      req.socket.destroy();
    },
  });
});

test('the client half-closes before the response', async () => {
  let waiting;
  await differential({
    onConnect(socket) {
      socket.write(GET);
      socket.end();
    },
    followUp: 'none',
    handler(req, res, ctx) {
      waiting = new Promise((resolve) => {
        req.socket.once('end', () => setImmediate(() => {
          ctx.snapshot('before end', res);
          ctx.tryEnd(res, 'after the client closed', (...args) => {
            ctx.log('callback', args.map(h.errorInfo));
          });
          resolve();
        }));
      });
    },
    waitFor: () => waiting,
  });
});

test('the client closes the connection before the response', async () => {
  await differential({
    onConnect(socket) {
      socket.write(GET);
      socket.destroy();
    },
    followUp: 'none',
    handler(req, res, ctx) {
      res.on('close', () => {
        ctx.tryEnd(res, 'after the client left', (...args) => {
          ctx.log('callback', args.map(h.errorInfo));
        });
        ctx.snapshot('after end', res);
      });
    },
  });
});

// ---------------------------------------------------------------------------
// 'error' listener on the response

test("an 'error' listener on the response: a normal end", async () => {
  await differential({
    request: GET,
    expectFast: 1,
    handler(req, res, ctx) {
      res.on('error', (err) => ctx.log('error listener', h.errorInfo(err)));
      ctx.tryEnd(res, 'fine', () => ctx.log('callback'));
    },
  });
});

test("an 'error' listener on the response: end() twice gives ERR_STREAM_WRITE_AFTER_END", async () => {
  const { node } = await differential({
    request: GET,
    expectFast: 1,
    handler(req, res, ctx) {
      res.on('error', (err) => ctx.log('error listener', h.errorInfo(err)));
      ctx.tryEnd(res, 'first', (...args) => ctx.log('callback 1', args.map(h.errorInfo)));
      ctx.tryEnd(res, 'second', (...args) => ctx.log('callback 2', args.map(h.errorInfo)));
      ctx.tryEnd(res, (...args) => ctx.log('callback 3', args.map(h.errorInfo)));
      try {
        res.write('third', (...args) => ctx.log('write callback', args.map(h.errorInfo)));
      } catch (err) {
        ctx.log('write threw', h.errorInfo(err));
      }
    },
  });
  assert.ok(node.log.some((e) => e[0] === 'error listener' && e[1].code === 'ERR_STREAM_WRITE_AFTER_END'));
});

// ---------------------------------------------------------------------------
// diagnostics_channel and AsyncLocalStorage

test("diagnostics_channel 'http.server.response.finish'", async () => {
  let server;
  let ctxOf;
  const onFinish = (message) => {
    const res = message.response;
    if (res.fastResponseTestNumber === undefined) return; // the sentinel's
    ctxOf.log([res.fastResponseTestNumber, 'dc finish', {
      request: message.request === res.req,
      socket: message.socket === res.req.socket,
      server: message.server === server,
      finished: res.writableFinished,
      url: message.request.url,
    }]);
  };
  diagnosticsChannel.subscribe('http.server.response.finish', onFinish);
  try {
    const { node } = await differential({
      request: requestN(1) + requestN(2) + 'HEAD /r3 HTTP/1.1\r\nHost: t\r\n\r\n',
      responses: 3,
      setup(s, ctx) {
        server = s;
        ctxOf = ctx;
      },
      handler(req, res, ctx) {
        ctx.tryEnd(res, `dc ${req.url}`, () => ctx.log('callback', req.url));
      },
    });
    assert.equal(node.log.filter((e) => e[1] === 'dc finish').length, 3);
  } finally {
    diagnosticsChannel.unsubscribe('http.server.response.finish', onFinish);
  }
});

test("AsyncLocalStorage context in the end callback and in 'finish' and 'close' listeners", async () => {
  const als = new AsyncLocalStorage();
  let n = 0;
  await differential({
    request: requestN(1) + requestN(2),
    responses: 2,
    setup() {
      n = 0;
    },
    handler(req, res, ctx) {
      const id = ++n;
      res.on('finish', () => ctx.log('finish outside run', id, als.getStore()));
      als.run({ id }, () => {
        res.on('finish', () => ctx.log('finish inside run', id, als.getStore()));
        res.on('close', () => ctx.log('close inside run', id, als.getStore()));
        ctx.tryEnd(res, `als ${id}`, () => ctx.log('callback', id, als.getStore()));
      });
    },
  });
});

test('AsyncLocalStorage context of the request handler, around fastEnd', async () => {
  const als = new AsyncLocalStorage();
  await differential({
    request: GET,
    expectFast: 1,
    setup(server) {
      const emit = server.emit;
      // Every 'request' runs in its own store, as tracing middleware does.
      server.emit = function(event, ...args) {
        if (event === 'request') return als.run({ request: args[0].url }, () => emit.call(this, event, ...args));
        return emit.call(this, event, ...args);
      };
    },
    handler(req, res, ctx) {
      res.on('finish', () => ctx.log('finish', als.getStore()));
      res.on('prefinish', () => ctx.log('prefinish', als.getStore()));
      ctx.tryEnd(res, 'als', () => ctx.log('callback', als.getStore()));
      ctx.log('after end', als.getStore());
    },
  });
});

// ---------------------------------------------------------------------------
// Encodings the fast path converts itself (or leaves to Node)

for (const [data, encoding] of [
  // (Not an odd-length hex string: Node 20's own end() aborts the process
  // on it, in StringBytes::StorageSize.)
  ['zz41', 'hex'],
  ['aGVsbG8', 'base64'],
  ['aGVs bG8=\n', 'base64'],
  ['aGVsbG8_-w', 'base64url'],
  ['héllo ✓', 'utf16le'],
  ['héllo ✓', 'ucs2'],
  ['héllo ✓', 'UTF-8'],
  ['héllo ✓', 'LATIN1'],
  ['héllo ✓', 'ascii'],
]) {
  test(`end(${JSON.stringify(data)}, '${encoding}')`, async () => {
    await differential({
      // Connection: close: with 'zz41' Node announces 2 bytes and sends none.
      request: GET_CLOSE,
      handler(req, res, ctx) {
        ctx.tryEnd(res, data, encoding, () => ctx.log('callback'));
      },
    });
  });
}
