'use strict';

// install() / uninstall(), res.fastEnd(), install({ patchEnd: true }) and
// `-r fast-response/register`: the prototype is restored exactly, patched
// res.end() takes the fast path with Node's bytes, and responses whose end()
// or writeHead() were wrapped on the instance keep their wrappers' contract.

const { describe, test, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');

const fastResponse = require('..');
const { NODE_COLLECTS_TICK_CHUNKS } = require('../lib/node-internals');
const { FRAMES_CHUNK } = require('../lib/chunked-buffer');
const { ENDS_QUEUED_WRITES } = require('../lib/stream');
const { differential, get, maskDate, runClient, listen, closeServer, withTimeout, TIMEOUT_MS } =
  require('./helpers/differential');

const { ServerResponse } = http;
const OutgoingMessage = Object.getPrototypeOf(ServerResponse.prototype).constructor;
const root = path.join(__dirname, '..');
const BODY = 'h\u00e9llo from the patched end';

function descriptors() {
  return {
    serverResponse: Object.getOwnPropertyDescriptors(ServerResponse.prototype),
    outgoingMessage: Object.getOwnPropertyDescriptors(OutgoingMessage.prototype),
  };
}

afterEach(() => fastResponse.uninstall());

describe('install() and uninstall()', () => {
  test('install() defines a non-enumerable res.fastEnd; uninstall() restores the prototype exactly', () => {
    const before = descriptors();
    assert.equal(ServerResponse.prototype.fastEnd, undefined);
    const uninstall = fastResponse.install();
    assert.equal(typeof uninstall, 'function');
    const d = Object.getOwnPropertyDescriptor(ServerResponse.prototype, 'fastEnd');
    assert.equal(typeof d.value, 'function');
    assert.equal(d.enumerable, false);
    assert.equal(ServerResponse.prototype.end, OutgoingMessage.prototype.end, 'end untouched without patchEnd');
    uninstall();
    assert.deepEqual(descriptors(), before);
  });

  test('install({ patchEnd: true }) replaces end on ServerResponse.prototype; uninstall() restores it exactly', () => {
    const before = descriptors();
    const uninstall = fastResponse.install({ patchEnd: true });
    assert.ok(Object.prototype.hasOwnProperty.call(ServerResponse.prototype, 'end'));
    assert.notEqual(ServerResponse.prototype.end, OutgoingMessage.prototype.end);
    assert.equal(OutgoingMessage.prototype.end, before.outgoingMessage.end.value, 'OutgoingMessage untouched');
    uninstall();
    assert.deepEqual(descriptors(), before);
    assert.equal(ServerResponse.prototype.end, OutgoingMessage.prototype.end);
  });

  // The package's write() stands over Node's own where Node's write() does
  // not collect every tick's chunks itself: Node 18 to 22 (lib/stream.js).
  test('install({ patchEnd: true }) replaces write() on Node 18 to 22, not on 24 and later; uninstall() restores Node\'s', () => {
    const nodeWrite = ServerResponse.prototype.write;
    assert.equal(nodeWrite, OutgoingMessage.prototype.write);
    const uninstall = fastResponse.install({ patchEnd: true });
    if (NODE_COLLECTS_TICK_CHUNKS) {
      assert.equal(ServerResponse.prototype.write, nodeWrite, 'Node 24+: write() left to Node');
    } else {
      assert.ok(Object.prototype.hasOwnProperty.call(ServerResponse.prototype, 'write'));
      assert.notEqual(ServerResponse.prototype.write, nodeWrite, `Node ${process.version}: the package's write()`);
    }
    uninstall();
    assert.equal(ServerResponse.prototype.write, nodeWrite);
    assert.ok(!Object.prototype.hasOwnProperty.call(ServerResponse.prototype, 'write'));
  });

  test('install() then install({ patchEnd: true }) turns patchEnd on; one uninstall() undoes both', () => {
    const before = descriptors();
    fastResponse.install();
    assert.equal(ServerResponse.prototype.end, OutgoingMessage.prototype.end);
    const uninstall = fastResponse.install({ patchEnd: true });
    assert.notEqual(ServerResponse.prototype.end, OutgoingMessage.prototype.end);
    uninstall();
    assert.deepEqual(descriptors(), before);
    uninstall(); // a second call changes nothing
    assert.deepEqual(descriptors(), before);
  });

  test('properties defined by the application before install() come back with their own descriptors', () => {
    const mine = function mine() { return 'mine'; };
    const myEnd = function myEnd(...args) { return OutgoingMessage.prototype.end.apply(this, args); };
    ServerResponse.prototype.fastEnd = mine; // enumerable, as a plain assignment makes it
    Object.defineProperty(ServerResponse.prototype, 'end', {
      configurable: true, enumerable: false, writable: false, value: myEnd,
    });
    try {
      const before = descriptors();
      const uninstall = fastResponse.install({ patchEnd: true });
      assert.notEqual(ServerResponse.prototype.fastEnd, mine);
      uninstall();
      assert.deepEqual(descriptors(), before);
    } finally {
      delete ServerResponse.prototype.fastEnd;
      delete ServerResponse.prototype.end;
    }
  });

  test('bad options: ERR_INVALID_ARG_TYPE', () => {
    for (const bad of [null, 'patchEnd', 1, true]) {
      assert.throws(() => fastResponse.install(bad), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' });
    }
    // Node's validateBoolean(): a truthy non-boolean is refused, not read as false.
    for (const bad of ['yes', 1, null, {}]) {
      assert.throws(() => fastResponse.install({ patchEnd: bad }),
                    { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /"options\.patchEnd" property must be of type boolean/ });
    }
    assert.doesNotThrow(() => fastResponse.install({ patchEnd: undefined })());
    assert.equal(ServerResponse.prototype.fastEnd, undefined);
  });
});

describe('res.fastEnd() after install()', () => {
  test('GET: fast path, Node\'s bytes', () =>
    differential({ mode: 'fastEnd', request: get(), handler: (req, res, ctx) => ctx.api.end(res, BODY) }));

  test('HEAD with a callback', () =>
    differential({ mode: 'fastEnd', request: get('/', '', 'HEAD'), handler: (req, res, ctx) => ctx.api.end(res, BODY, ctx.callback()) }));

  test('a response whose end() was replaced on the instance: fastEnd delegates to it, with the same arguments', () =>
    differential({
      mode: 'fastEnd',
      request: get(),
      handler: (req, res, ctx) => {
        const original = res.end;
        let calls = 0;
        res.end = function compressionLikeEnd(...args) {
          calls++;
          ctx.record('replaced end arguments', args.map((a) => (typeof a === 'function' ? 'function' : a)));
          res.setHeader('X-Wrapped', 'yes');
          return original.apply(this, args);
        };
        ctx.api.end(res, BODY, ctx.callback());
        res.on('finish', () => ctx.record('replaced end calls', calls));
      },
      fast: 0,
      fallback: { 'end-replaced': 1 },
    }));

  // A route opting in with a replacement that calls the package back (found
  // by a new-user check: it recursed until the stack overflowed). Node's run
  // has the same replacement over Node's own end() / write(). Called through
  // res.end() (res.write()), the replacement runs twice in the package's run:
  // fastEnd() calls the replaced end() it finds, which calls fastEnd() back
  // (README, fastEnd() and a replaced end()); so it records nothing here.
  const callingBack = (name, fastName) => (req, res, ctx) => {
    const nodes = res[name];
    res[name] = function optIn(...args) {
      return ctx.label === 'node' ? nodes.apply(this, args) : this[fastName](...args);
    };
  };

  test('an end() replacement that calls res.fastEnd() back: the fast path, not a recursion', () =>
    differential({
      mode: 'fastEnd',
      request: get(),
      handler: (req, res, ctx) => {
        callingBack('end', 'fastEnd')(req, res, ctx);
        ctx.api.end(res, BODY, ctx.callback());
      },
      fast: 1,
      fallback: { 'end-replaced': 1 },
    }));

  test('res.end() replaced to call res.fastEnd(): the fast path', () =>
    differential({
      mode: 'fastEnd',
      request: get(),
      handler: (req, res, ctx) => {
        callingBack('end', 'fastEnd')(req, res, ctx);
        res.end(BODY);
      },
      fast: 1,
      fallback: { 'end-replaced': 1 },
    }));

  test('res.write() replaced to call res.fastWrite(), then res.end(): Node\'s bytes, no recursion', () =>
    differential({
      mode: 'fastEnd',
      request: get(),
      handler: (req, res, ctx) => {
        callingBack('write', 'fastWrite')(req, res, ctx);
        ctx.record('write returned', res.write('chunk', ctx.callback('write callback')));
        res.end(BODY);
      },
      fast: 0,
      writes: 1,
      fallback: { 'write-replaced': 1 },
    }));

  test('calling a replaced end() or write() adds nothing to the message (a frozen one too)', () => {
    const msg = Object.freeze({ end: (...args) => ['ended', ...args], write: (...args) => ['wrote', ...args] });
    const keys = Reflect.ownKeys(msg);
    assert.deepEqual(fastResponse.end(msg, 'x'), ['ended', 'x']);
    assert.deepEqual(fastResponse.write(msg, 'y', 'latin1'), ['wrote', 'y', 'latin1']);
    assert.deepEqual(Reflect.ownKeys(msg), keys);
  });

  test('an agent\'s end() wrapper beneath a replacement that calls fastEnd() back: the agent sees the call', async () => {
    const proto = http.OutgoingMessage.prototype;
    const nodes = proto.end;
    const agentEnd = function agentEnd(...args) {
      this.setHeader('X-Agent', 'seen');
      return nodes.apply(this, args);
    };
    proto.end = agentEnd;
    try {
      await differential({
        mode: 'fastEnd',
        request: get(),
        handler: (req, res, ctx) => {
          callingBack('end', 'fastEnd')(req, res, ctx);
          ctx.api.end(res, BODY);
        },
        fast: 0,
        fallback: { 'end-replaced': 2 },
      });
    } finally {
      assert.equal(proto.end, agentEnd);
      proto.end = nodes;
    }
  });

  test('a ServerResponse subclass whose end() calls this.fastEnd(): the fast path', () =>
    differential({
      mode: 'fastEnd',
      request: get(),
      serverOptions: {
        ServerResponse: class OptIn extends http.ServerResponse {
          end(...args) {
            return typeof this.fastEnd === 'function' ? this.fastEnd(...args) : super.end(...args);
          }
        },
      },
      handler: (req, res) => {
        res.setHeader('X-A', 'b');
        res.end(BODY);
      },
      fast: 1,
      fallback: { 'end-replaced': 1 },
    }));
});

// A faithful miniature of the on-headers package: wraps res.writeHead on the
// instance and runs a listener once, right before the head is rendered.
function onHeaders(res, listener) {
  const previous = res.writeHead;
  let fired = false;
  res.writeHead = function writeHead(statusCode, reason, headers) {
    const args = [statusCode];
    if (typeof reason === 'string') args.push(reason);
    else headers = reason;
    if (headers && typeof headers === 'object' && !Array.isArray(headers)) {
      for (const key of Object.keys(headers)) this.setHeader(key, headers[key]);
    }
    if (!fired) {
      fired = true;
      listener.call(this);
      if (typeof args[0] === 'number' && this.statusCode !== args[0]) {
        args[0] = this.statusCode;
        args.length = 1;
      }
    }
    return previous.apply(this, args);
  };
}

for (const mode of ['fastEnd', 'patched']) {
  describe(`an on-headers-style writeHead wrapper on the instance (${mode})`, () => {
    test('is called exactly once, its headers are in the head, fast path, Node\'s bytes', () =>
      differential({
        mode,
        request: get(),
        handler: (req, res, ctx) => {
          let calls = 0;
          res.setHeader('Content-Type', 'text/plain');
          onHeaders(res, function listener() {
            calls++;
            this.setHeader('X-Response-Time', '1.000ms');
            this.statusCode = 202;
          });
          ctx.api.end(res, BODY);
          res.on('finish', () => ctx.record('listener calls', calls));
        },
      }).then(({ fast }) => {
        assert.deepEqual(fast.rec.custom, [{ at: 'res0:listener calls', value: 1 }]);
        assert.match(fast.bytes.toString('latin1'), /^HTTP\/1\.1 202 Accepted\r\n[^]*X-Response-Time: 1\.000ms\r\n/);
      }));

    // Node renders this head itself (the wrapper is called) and re-encodes a
    // non-ASCII Content-Disposition through a latin1 Buffer when the
    // Content-Length is known (nodejs/node#46528): `_header` then holds
    // U+FFFD, a character no latin1 byte says. With a UTF-8 string body the
    // addon must send that head UTF-8 encoded, as Node's `_header + chunk`.
    test('a non-ASCII Content-Disposition and a UTF-8 body: Node\'s U+FFFD head, UTF-8 encoded', () =>
      differential({
        mode,
        request: get(),
        handler: (req, res, ctx) => {
          res.setHeader('Content-Disposition', 'attachment; filename="\u00e9t\u00e9.txt"');
          onHeaders(res, () => {});
          ctx.api.end(res, 'h\u00e9llo \u2713');
          ctx.record('_header has U+FFFD', res._header.includes('\ufffd'));
        },
      }).then(({ fast }) => {
        assert.deepEqual(fast.rec.custom, [{ at: 'res0:_header has U+FFFD', value: true }]);
        assert.ok(fast.bytes.includes(Buffer.from('filename="\ufffdt\ufffd.txt"', 'utf8')));
      }));

    test('on a HEAD request', () =>
      differential({
        mode,
        request: get('/', '', 'HEAD'),
        handler: (req, res, ctx) => {
          let calls = 0;
          onHeaders(res, () => { calls++; });
          ctx.api.end(res, BODY);
          res.on('finish', () => ctx.record('listener calls', calls));
        },
      }));
  });
}

describe('a writeHead() wrapper that throws', () => {
  for (const mode of ['fastEnd', 'patched']) {
    test(`${mode}: the error comes out of end(), the socket stays corked as with Node, the next end() works`, () =>
      differential({
        mode,
        request: get(),
        handler: (req, res, ctx) => {
          const original = res.writeHead;
          let calls = 0;
          res.writeHead = function throwingOnce(...args) {
            if (calls++ === 0) throw new Error('from the wrapper');
            return original.apply(this, args);
          };
          ctx.attempt('end', () => ctx.rawApi.end(res, BODY));
          ctx.record('socket corked after the throw', req.socket.writableCorked);
          res.end('after the error');
        },
        fast: 0,
        fallback: mode === 'patched' ? { 'socket-busy': 1 } : {},
      }).then(({ fast }) => {
        assert.equal(fast.rec.calls[0].threw.message, 'from the wrapper');
      }));
  }
});

describe('install({ patchEnd: true }): plain res.end(data) takes the fast path', () => {
  const cases = [
    ['GET with setHeader fields', get(), (req, res, ctx) => {
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      ctx.api.end(res, BODY);
    }],
    ['HEAD', get('/', '', 'HEAD'), (req, res, ctx) => ctx.api.end(res, BODY)],
    ['status 404 with a custom message', get(), (req, res, ctx) => {
      res.statusCode = 404;
      res.statusMessage = 'Nowhere';
      ctx.api.end(res, BODY);
    }],
    ['204', get(), (req, res, ctx) => {
      res.statusCode = 204;
      ctx.api.end(res, BODY);
    }],
    ['HTTP/1.0', get('/', '', 'GET', '1.0'), (req, res, ctx) => ctx.api.end(res, BODY)],
    ['Connection: close request', get('/', 'Connection: close\r\n'), (req, res, ctx) => ctx.api.end(res, BODY)],
    ['Buffer body with a callback', get(), (req, res, ctx) => ctx.api.end(res, Buffer.from(BODY), ctx.callback())],
    ['latin1 encoding and a callback', get(), (req, res, ctx) => ctx.api.end(res, 'caf\u00e9', 'latin1', ctx.callback())],
    ['writeHead with Content-Length, then end', get(), (req, res, ctx) => {
      res.writeHead(200, { 'Content-Length': Buffer.byteLength(BODY) });
      ctx.api.end(res, BODY);
    }],
    ['latin1 header value with a utf8 body', get(), (req, res, ctx) => {
      res.setHeader('X-Latin1', 'caf\u00e9');
      ctx.api.end(res, BODY);
    }],
    ['pipelined requests, each ended when current', get('/a') + get('/b') + get('/c'), (req, res, ctx) =>
      setImmediate(() => ctx.api.end(res, req.url))],
  ];
  for (const [name, request, handler] of cases) {
    test(name, () => differential({ mode: 'patched', request, handler }));
  }

  test('res.end() without data is Node\'s own, counted no-body as fastEnd() counts it', () =>
    differential({
      mode: 'patched', request: get(), handler: (req, res, ctx) => ctx.api.end(res), fast: 0, fallback: { 'no-body': 1 },
    }));

  test('res.end(callback) and res.end("") are Node\'s own, counted as fastEnd() counts them', async () => {
    await differential({
      mode: 'patched', request: get(), handler: (req, res, ctx) => ctx.api.end(res, ctx.callback()), fast: 0,
      fallback: { 'no-body': 1 },
    });
    await differential({
      mode: 'patched', request: get(), handler: (req, res, ctx) => ctx.api.end(res, ''), fast: 0, fallback: { 'empty-body': 1 },
    });
  });

  test('the server\'s own responses (maxRequestsPerSocket 503) still work', () =>
    differential({
      mode: 'patched',
      request: get('/1') + get('/2'),
      expect: { responses: 2, waitForClose: false },
      setup: (server) => { server.maxRequestsPerSocket = 1; },
      handler: (req, res, ctx) => setImmediate(() => ctx.api.end(res, req.url)),
      fast: 1,
      // Node's server ends its 503 with res.end() (no data).
      fallback: { 'no-body': 1 },
    }));

  test('a number body throws ERR_INVALID_ARG_TYPE, nothing written', () =>
    differential({
      mode: 'patched',
      request: get(),
      handler: (req, res, ctx) => {
        ctx.attempt('bad end', () => ctx.rawApi.end(res, 42));
        ctx.record('bytesWritten', req.socket.bytesWritten);
        res.end('after the error');
      },
      fast: 0,
      fallback: { 'body-type': 1, 'socket-busy': 1 },
    }).then(({ fast }) => {
      assert.equal(fast.rec.calls[0].threw.code, 'ERR_INVALID_ARG_TYPE');
      assert.equal(fast.rec.custom[0].value, 0);
    }));

  test('ending twice: ERR_STREAM_WRITE_AFTER_END', () =>
    differential({
      mode: 'patched',
      request: get(),
      handler: (req, res, ctx) => {
        ctx.api.end(res, BODY);
        ctx.api.end(res, 'again', ctx.callback('second'));
      },
      fast: 1,
      fallback: { finished: 1 },
    }));

  test('user res.cork() falls back with equal bytes', () =>
    differential({
      mode: 'patched',
      request: get(),
      handler: (req, res, ctx) => {
        res.cork();
        ctx.api.end(res, BODY);
      },
      fast: 0,
      fallback: { 'socket-busy': 1 },
    }));

  test('res.write() then res.end(data)', () =>
    differential({
      mode: 'patched',
      request: get(),
      handler: (req, res, ctx) => {
        res.write('part one, ');
        ctx.api.end(res, 'part two');
      },
      // Node 24+: the chunk Node collected and end()'s data written by the
      // addon (lib/chunked-buffer.js endCollected()).
      // Node 18 to 22: end()'s data framed into the tick's queued chunk,
      // written with it (lib/stream.js endQueuedData()).
      ...(FRAMES_CHUNK || ENDS_QUEUED_WRITES ? { fast: 1, fallback: {} } :
        { fast: 0, fallback: [{ 'head-sent': 1 }, { 'socket-busy': 1 }] }),
    }));

  test('8 MiB body to a client that reads late: partial write, exact bytes', () =>
    differential({
      mode: 'patched',
      request: get(),
      pauseClientUntil: 'ended',
      handler: (req, res, ctx) => {
        ctx.api.end(res, Buffer.alloc(8 * 1024 * 1024, 'z'), ctx.callback());
        ctx.signal('ended').resolve();
      },
      partial: 1,
    }));
});

describe('-r fast-response/register', () => {
  // The app: plain res.end(data); prints its port, then its stats once the
  // response has finished, and exits.
  const app = `
    const http = require('node:http');
    const server = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.on('finish', () => {
        const fr = require(${JSON.stringify(root)});
        process.stdout.write(JSON.stringify({ stats: fr.stats(), patched: typeof res.fastEnd }) + '\\n');
        server.close();
      });
      res.end(${JSON.stringify(BODY)});
    });
    server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
  `;

  async function serveOnce(preload) {
    const child = spawn(process.execPath, ['-r', preload, '-e', app], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => { out += c; });
    child.stderr.on('data', (c) => { err += c; });
    const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const port = await withTimeout(new Promise((resolve, reject) => {
        child.stdout.on('data', () => {
          const line = out.split('\n')[0];
          if (out.includes('\n')) resolve(Number(line));
        });
        child.on('exit', () => reject(new Error(`child exited early: ${err}`)));
      }), TIMEOUT_MS, 'child to listen');
      const { bytes } = await runClient({ transport: 'tcp', port, request: get(), expect: {} });
      const code = await withTimeout(exited, TIMEOUT_MS, 'child to exit');
      assert.equal(code, 0, err);
      return { bytes, report: JSON.parse(out.split('\n')[1]) };
    } finally {
      if (child.exitCode === null) child.kill();
    }
  }

  // The same app with Node's own end, in this process.
  async function reference() {
    const server = http.createServer((req, res) => {
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end(BODY);
    });
    const port = await listen(server);
    try {
      return (await runClient({ transport: 'tcp', port, request: get(), expect: {} })).bytes;
    } finally {
      await closeServer(server);
    }
  }

  for (const preload of ['./register.js', 'fast-response/register']) {
    test(`node -r ${preload}: the response is fast and byte-identical to Node's`, async () => {
      const expected = await reference();
      const { bytes, report } = await serveOnce(preload);
      assert.equal(maskDate(bytes.toString('latin1')), maskDate(expected.toString('latin1')));
      assert.equal(report.stats.fast, 1, JSON.stringify(report));
      assert.equal(report.stats.fallback, 0, JSON.stringify(report));
      assert.equal(report.patched, 'function');
    });
  }
});

// Methods install() defines over a prototype's own keep its attributes
// (Node's ServerResponse.prototype.writeHead is enumerable): V8 holds a
// prototype one of whose properties changed its attributes as a dictionary
// (slow properties) from then on, and each `new ServerResponse()` cost
// several times as much (lib/node-internals.js defineMethod()). Asked of
// V8 itself (%HasFastProperties, in a child with --allow-natives-syntax)
// after each step, responses made between them as a server makes them:
// the same as before install().
describe('install() and uninstall() keep the prototypes as V8 held them', () => {
  const script = `
    const http = require('node:http');
    const fastResponse = require(${JSON.stringify(root)});
    const P = http.ServerResponse.prototype;
    const state = () => [%HasFastProperties(P), %HasFastProperties(http.ClientRequest.prototype),
                         Object.keys(P).join()];
    const use = () => {
      const req = new http.IncomingMessage(null);
      req.method = 'GET';
      new http.ServerResponse(req);
    };
    use();
    const seen = { before: state() };
    const steps = {
      installed: () => fastResponse.install(),
      patched: () => fastResponse.install({ patchEnd: true }),
      uninstalled: () => fastResponse.uninstall(),
      again: () => fastResponse.install({ patchEnd: true }),
    };
    for (const [name, step] of Object.entries(steps)) {
      step();
      use();
      seen[name] = state();
    }
    console.log(JSON.stringify(seen));
  `;

  test('ServerResponse.prototype and ClientRequest.prototype after install(), patchEnd, uninstall()', () => {
    const child = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { cwd: root, encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const seen = JSON.parse(child.stdout);
    // Node's own: ServerResponse.prototype fast once it made a response.
    assert.equal(seen.before[0], true);
    const keys = seen.before[2];
    assert.deepEqual(seen, {
      before: seen.before,
      installed: [true, seen.before[1], keys],
      patched: [true, seen.before[1], keys],
      uninstalled: [true, seen.before[1], keys],
      again: [true, seen.before[1], keys],
    });
  });
});
