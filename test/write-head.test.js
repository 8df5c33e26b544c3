'use strict';

// res.writeHead() under install({ patchEnd: true }) (lib/write-head.js)
// against Node's own writeHead(): the head rendered natively where Node's
// would take the headers argument as it is. Every case: the same bytes,
// events, return values, thrown errors and the response's state after each
// call (headersSent, _header with Date masked, chunkedEncoding,
// shouldKeepAlive, _last, _contentLength, statusCode, statusMessage, ...),
// and stats().heads says which heads the package rendered (none on Node 18,
// where Node renders every head).

const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { describe, test } = require('node:test');

const { differential, get } = require('./helpers/differential');
const { NODE_RENDERS_HEAD, NODE_COLLECTS_TICK_CHUNKS } = require('../lib/node-internals');
const { FRAMES_CHUNK } = require('../lib/chunked-buffer');
const { ENDS_QUEUED_WRITES } = require('../lib/stream');

const BODY = 'hello, head';
// One object for both runs: the recorded state holds it.
const TWO_WAY_MESSAGE = { valueOf: () => 'VAL', toString: () => 'STR' };

/** Heads the package renders: `n` on Node 20 and later, 0 on Node 18. */
function heads(n) {
  return NODE_RENDERS_HEAD ? 0 : n;
}

/** res.write() chunks the package frames: none on Node 24 and later. */
function framed(n) {
  return NODE_COLLECTS_TICK_CHUNKS ? 0 : n;
}

/** writeHead(...args) recorded (its return value, error and the state after it). */
function writeHead(ctx, res, ...args) {
  return ctx.attempt('writeHead', () => res.writeHead(...args));
}

/** A handler: writeHead(...args), then end(BODY). */
function headThenEnd(...args) {
  return (req, res, ctx) => {
    writeHead(ctx, res, ...args);
    ctx.api.end(res, BODY);
  };
}

function patched(opts) {
  return differential({ mode: 'patched', request: get(), ...opts });
}

describe('res.writeHead() under patchEnd: rendered natively, as Node renders it', () => {
  test('writeHead(200, { Content-Type, Content-Length }) then end(body)', () =>
    patched({ handler: headThenEnd(200, { 'Content-Type': 'text/plain', 'Content-Length': BODY.length }), heads: heads(1) }));

  test('a reason phrase and a flat array of fields', () =>
    patched({ handler: headThenEnd(201, 'Made It', ['X-One', '1', 'x-two', 'two', 'X-One', 'again']), heads: heads(1) }));

  test('writeHead(200) alone: a chunked head, end(body) as one chunk', () =>
    patched({ handler: headThenEnd(200), heads: heads(1) }));

  test('headers as the second argument, null, undefined and an explicit undefined reason', () =>
    patched({
      request: [get(), get(), get()],
      expect: { responses: 3 },
      handler: (req, res, ctx) => {
        if (ctx.index === 0) writeHead(ctx, res, 200, null);
        else if (ctx.index === 1) writeHead(ctx, res, 200, undefined, { 'X-Late': 'yes' });
        else writeHead(ctx, res, 202, { 'X-Obj': 'as reason' }, { 'X-Wins': 'obj' });
        ctx.api.end(res, BODY);
      },
      heads: heads(3),
    }));

  test('array values, numbers, a latin1 field-value and a UTF-8 body', () =>
    patched({
      handler: headThenEnd(200, { 'Set-Cookie': ['a=1', 'b=2'], 'X-Num': 42, 'X-Name': 'caf\u00e9' }),
      heads: heads(1),
    }));

  test('a status code Node does not name, and a statusMessage set before', () =>
    patched({
      request: [get(), get()],
      expect: { responses: 2 },
      handler: (req, res, ctx) => {
        if (ctx.index === 0) {
          writeHead(ctx, res, 599, { 'Content-Length': BODY.length });
        } else {
          res.statusMessage = 'Kept';
          writeHead(ctx, res, 200);
        }
        ctx.api.end(res, BODY);
      },
      heads: heads(2),
    }));

  test('204 and 304: no body, the writes ignored as Node ignores them', () =>
    patched({
      request: get() + get(),
      expect: { responses: 2 },
      handler: (req, res, ctx) => {
        writeHead(ctx, res, ctx.index === 0 ? 204 : 304, { 'X-Status': 'no body' });
        ctx.api.end(res);
      },
      heads: heads(2),
      fast: 0,
      fallback: { 'no-body': 2 },
    }));

  test('a HEAD request: the head only', () =>
    patched({
      request: get('/', '', 'HEAD'),
      handler: headThenEnd(200, { 'Content-Type': 'text/plain' }),
      heads: heads(1),
    }));

  test('an HTTP/1.0 client: no chunked framing, the connection closes', () =>
    patched({
      request: get('/', '', 'GET', '1.0'),
      expect: { untilClose: true },
      handler: headThenEnd(200, { 'Content-Type': 'text/plain' }),
      heads: heads(1),
    }));

  test('Connection: close, a Keep-Alive field, a Date field and sendDate false', () =>
    patched({
      request: [get(), get(), get()],
      expect: { responses: 3, untilClose: true },
      handler: (req, res, ctx) => {
        if (ctx.index === 0) {
          writeHead(ctx, res, 200, { 'Keep-Alive': 'timeout=9', 'Content-Length': BODY.length });
        } else if (ctx.index === 1) {
          res.sendDate = false;
          writeHead(ctx, res, 200, { Date: 'Thu, 01 Jan 1970 00:00:00 GMT' });
        } else {
          writeHead(ctx, res, 200, { Connection: 'close', 'Content-Length': BODY.length });
        }
        ctx.api.end(res, BODY);
      },
      heads: heads(3),
    }));

  test('the server\'s keepAliveTimeout and maxRequestsPerSocket', () =>
    patched({
      request: [get(), get()],
      expect: { responses: 2 },
      setup: (server) => {
        server.keepAliveTimeout = 7000;
        server.maxRequestsPerSocket = 2;
      },
      handler: headThenEnd(200, { 'Content-Type': 'text/plain' }),
      heads: heads(2),
    }));

  test('Expect: 100-continue left unanswered: no keep-alive, as Node', () =>
    patched({
      request: 'POST / HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n',
      expect: { untilClose: true },
      serverOptions: {},
      setup: (server) => server.on('checkContinue', (req, res) => server.emit('request', req, res)),
      handler: headThenEnd(200, { 'Content-Type': 'text/plain' }),
      heads: heads(1),
    }));

  test('writes after writeHead(): chunks framed after the native head', () =>
    patched({
      handler: (req, res, ctx) => {
        writeHead(ctx, res, 200, { 'Content-Type': 'text/plain' });
        ctx.api.write(res, 'one ');
        ctx.api.write(res, Buffer.from('two '));
        ctx.api.end(res);
      },
      heads: heads(1),
      writes: framed(2),
      // Node 24+: end() writes the chunks Node collected in its tick
      // (lib/chunked-buffer.js endCollected()); Node 18 to 22: the tick's
      // queued chunks, the Buffer among them (lib/stream.js endQueued()).
      ...(FRAMES_CHUNK || ENDS_QUEUED_WRITES ? { fast: 1, fallback: {} } : { fast: 0, fallback: { 'no-body': 1 } }),
    }));

  test('a Content-Length field with writes: the chunks as they are', () =>
    patched({
      handler: (req, res, ctx) => {
        writeHead(ctx, res, 200, { 'Content-Length': 8 });
        ctx.api.write(res, 'one ');
        ctx.api.write(res, 'two ');
        ctx.api.end(res);
      },
      heads: heads(1),
      fast: 0,
      fallback: NODE_COLLECTS_TICK_CHUNKS ? { 'no-body': 1 } : { 'not-chunked': 2, 'no-body': 1 },
    }));

  test('the head Node\'s own end() renders through _implicitHeader(): statusCode and no fields', () =>
    patched({
      request: get() + get(),
      expect: { responses: 2 },
      handler: (req, res, ctx) => {
        res.statusCode = 404;
        if (ctx.index === 0) ctx.api.end(res);
        else ctx.api.end(res, Buffer.alloc(0));
      },
      heads: heads(2),
      fast: 0,
      fallback: [{ 'no-body': 1, 'empty-body': 1 }, { 'no-body': 2 }],
    }));
});

// lib/write-head.js keeps the last head it rendered and gives it again for
// the same inputs within the same second: each request here changes one
// input from the request before it, on one connection (the same second, so
// a key that missed an input would send the head before it).
describe('res.writeHead() under patchEnd: the kept head', () => {
  const FIELDS = { 'Content-Type': 'text/plain', 'Content-Length': BODY.length };
  const OTHER = { 'Content-Type': 'text/html', 'Content-Length': BODY.length };
  const LOWER = { 'content-type': 'text/html', 'Content-Length': BODY.length };
  const STEPS = [
    (res, ctx) => writeHead(ctx, res, 200, FIELDS),
    // The same again: the kept head.
    (res, ctx) => writeHead(ctx, res, 200, FIELDS),
    (res, ctx) => writeHead(ctx, res, 200, 'Fine', FIELDS),
    (res, ctx) => writeHead(ctx, res, 203, 'Fine', FIELDS),
    (res, ctx) => writeHead(ctx, res, 203, 'Fine', OTHER),
    // keepAliveTimeout, set by the step before (the server's, copied to
    // each response when its request is parsed).
    (res, ctx) => writeHead(ctx, res, 203, 'Fine', OTHER),
    // maxRequestsPerSocket, set by the step before.
    (res, ctx) => writeHead(ctx, res, 203, 'Fine', OTHER),
    // A field-name that differs only in case: the same count and values.
    (res, ctx) => writeHead(ctx, res, 203, 'Fine', LOWER),
    // The state bits: no Date field.
    (res, ctx) => {
      res.sendDate = false;
      writeHead(ctx, res, 203, 'Fine', LOWER);
    },
  ];

  test('each input of the head changed in turn, one connection', () =>
    patched({
      request: STEPS.map(() => get()),
      expect: { responses: STEPS.length },
      handler: (req, res, ctx) => {
        STEPS[ctx.index](res, ctx);
        if (ctx.index === 4) req.socket.server.keepAliveTimeout = 9000;
        if (ctx.index === 5) req.socket.server.maxRequestsPerSocket = 50;
        ctx.api.end(res, BODY);
      },
      heads: heads(STEPS.length),
    }));

  test('_contentLength from Node\'s own end(): Content-Length: 0, then a chunked head for the same status', () =>
    patched({
      request: [get(), get(), get()],
      expect: { responses: 3 },
      handler: (req, res, ctx) => {
        res.statusCode = 404;
        if (ctx.index === 1) ctx.api.write(res, 'streamed');
        ctx.api.end(res);
      },
      heads: heads(3),
      writes: framed(1),
      // The second response's end() writes its chunk: Node 24+ its
      // collected chunk, Node 18-22 the socket's queued one.
      ...(FRAMES_CHUNK || ENDS_QUEUED_WRITES ? { fast: 1, fallback: { 'no-body': 2 } } :
        { fast: 0, fallback: { 'no-body': 3 } }),
    }));

  // The kept head's second comes from the addon's clock. Fake timers
  // replace Date.now (sinon and jest replace the whole Date), also before
  // the package loads and with an offset (a new-user check): Node's own
  // Date field follows none of them, and neither may this one.
  const DATE_CHILD = `
    const http = require('node:http');
    const realNow = Date.now;
    const fake = process.argv[1];
    if (fake === 'frozen') Date.now = () => 0;
    if (fake === 'offset') Date.now = () => realNow() + 500;
    const fastResponse = require(${JSON.stringify(require.resolve('..'))});
    fastResponse.install({ patchEnd: true });
    const dates = [];
    const server = http.createServer((req, res) => {
      const before = Math.floor(realNow() / 1000);
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': 2 });
      const after = Math.floor(realNow() / 1000);
      dates.push({ field: /\\r\\nDate: ([^\\r]*)\\r\\n/.exec(res._header)[1], before, after });
      res.end('ok');
    });
    server.listen(0, '127.0.0.1', async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const fetchOne = () => new Promise((resolve, reject) => {
        http.get({ port: server.address().port, host: '127.0.0.1', agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        }).on('error', reject);
      });
      // Twice in each of three seconds, the second time 600 ms in: with the
      // offset clock, a key from Date.now would cross its second there.
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 1000 - (realNow() % 1000) + 20));
        await fetchOne();
        await new Promise((resolve) => setTimeout(resolve, 600));
        await fetchOne();
      }
      agent.destroy();
      server.close();
      console.log(JSON.stringify({ dates, heads: fastResponse.stats().heads }));
    });
  `;

  for (const fake of ['none', 'frozen', 'offset']) {
    test(`the Date field of the second that renders it, across seconds; Date.now replaced before the package loads: ${fake}`, {
      skip: NODE_RENDERS_HEAD && 'Node 18 renders every head',
    }, () => {
      const r = spawnSync(process.execPath, ['-e', DATE_CHILD, fake], { encoding: 'utf8', timeout: 30000 });
      assert.equal(r.status, 0, r.stderr);
      const { dates, heads: rendered } = JSON.parse(r.stdout);
      assert.equal(rendered, 6, 'heads rendered by the package');
      assert.equal(dates.length, 6);
      for (const { field, before, after } of dates) {
        const seconds = [];
        for (let s = before; s <= after; s++) seconds.push(new Date(s * 1000).toUTCString());
        assert.ok(seconds.includes(field), `Date: ${field} is of a second during writeHead() (${seconds.join(', ')})`);
      }
    });
  }
});

describe('res.writeHead() under patchEnd: where Node renders the head', () => {
  test('after setHeader(): Node merges the fields into its map', () =>
    patched({
      handler: (req, res, ctx) => {
        res.setHeader('X-Set', 'first');
        writeHead(ctx, res, 200, { 'X-Given': 'second', 'Content-Length': BODY.length });
        ctx.api.end(res, BODY);
      },
      heads: 0,
    }));

  test('a Transfer-Encoding field: Node frames the body', () =>
    patched({
      handler: headThenEnd(200, { 'Transfer-Encoding': 'chunked' }),
      heads: 0,
    }));

  test('a status code given as a string: Node\'s own writeHead()', () =>
    patched({ handler: headThenEnd('200', { 'Content-Length': BODY.length }), heads: 0 }));
});

describe('res.writeHead() under patchEnd: errors, as Node throws them, nothing changed before', () => {
  for (const [name, args] of [
    ['status code 99', [99, { 'X-A': '1' }]],
    ['status code 1000', [1000]],
    ['a reason phrase with a line feed', [200, 'bad\nreason']],
    ['a reason phrase with a NUL, on a 204', [204, 'bad\u0000']],
    ['a field-name with a space', [200, { 'bad name': '1' }]],
    ['an undefined field-value', [200, { 'X-A': undefined }]],
    ['a field-value with CR LF', [200, { 'X-A': 'a\r\nb' }]],
    ['a field-value beyond latin1', [200, { 'X-A': 'snow \u2603' }]],
    ['an odd flat array', [200, ['X-A']]],
  ]) {
    test(`${name}: Node's error, then a good writeHead() and end()`, () =>
      patched({
        handler: (req, res, ctx) => {
          const err = writeHead(ctx, res, ...args);
          ctx.record('threw', err === null ? null : err.code);
          ctx.record('bytesWritten', req.socket.bytesWritten);
          // Node keeps a reason phrase it rejected.
          res.statusMessage = '';
          writeHead(ctx, res, 200, { 'Content-Length': 5 });
          ctx.api.end(res, 'after');
        },
        heads: heads(1),
      }));
  }

  // From a new-user check: Node sets statusCode and statusMessage before it
  // reads the headers, so a getter that throws leaves them set.
  test('a header getter that throws: the same error, statusCode and statusMessage set as Node sets them', () =>
    patched({
      handler: (req, res, ctx) => {
        const headers = { get 'X-G'() { throw new Error('getter'); } };
        const err = writeHead(ctx, res, 201, 'Made', headers);
        ctx.record('threw', err === null ? null : err.message);
        writeHead(ctx, res, 200, { 'Content-Length': 5 });
        ctx.api.end(res, 'after');
      },
      heads: heads(1),
    }));

  test('a field-value whose toString() and valueOf() differ: Node checks one and sends the other', () =>
    patched({
      request: [get(), get()],
      expect: { responses: 2 },
      handler: (req, res, ctx) => {
        const bad = { valueOf: () => 'ok', toString: () => 'bad\nInjected: 1' };
        const good = { valueOf: () => 'value', toString: () => 'string' };
        const err = writeHead(ctx, res, 200, { 'X-V': ctx.index === 0 ? bad : [good] });
        ctx.record('threw', err === null ? null : err.code);
        if (err !== null) {
          res.statusMessage = '';
          writeHead(ctx, res, 200, { 'Content-Length': 5 });
        }
        ctx.api.end(res, 'after');
      },
      heads: heads(1),
    }));

  test('a statusMessage that is not a string, and chunkedEncoding set before a 204', () =>
    patched({
      request: [get(), get()],
      expect: { responses: 2 },
      handler: (req, res, ctx) => {
        if (ctx.index === 0) {
          res.statusMessage = TWO_WAY_MESSAGE;
          writeHead(ctx, res, 200, { 'Content-Length': 5 });
        } else {
          res.chunkedEncoding = true;
          writeHead(ctx, res, 204);
        }
        ctx.api.end(res, 'after');
      },
      heads: 0,
    }));

  test('writeHead() twice: ERR_HTTP_HEADERS_SENT', () =>
    patched({
      handler: (req, res, ctx) => {
        writeHead(ctx, res, 200, { 'Content-Length': BODY.length });
        const err = writeHead(ctx, res, 201);
        ctx.record('threw', err === null ? null : err.code);
        ctx.api.end(res, BODY);
      },
      heads: heads(1),
    }));
});
