'use strict';

// Outgoing requests (lib/client.js): req.fastEnd() after install() and
// req.end() under install({ patchEnd: true }) against Node's own req.end(),
// each scenario run with both (test/helpers/client-differential.js): the
// bytes a raw server receives on each connection, the events of every
// request and response in order ('socket', 'prefinish', 'finish',
// 'information', 'response', 'close', 'error', 'timeout', 'abort'), the
// request's state at each, errors; and stats().requests saying exactly
// which requests the package wrote with its one writev(2) and which it left
// to Node, and why.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const https = require('node:https');
const http2 = require('node:http2');
const net = require('node:net');

const fastResponse = require('..');
const { clientDifferential, OK } = require('./helpers/client-differential');
const { CLIENT_PATH_GAINS } = require('../lib/node-internals');
const { tlsOptions } = require('./helpers/differential');

const JSON_BODY = JSON.stringify({ id: 12345, user: 'ada', items: [1, 2, 3], total: 42.5, ok: 1 });
const POST = { method: 'POST', headers: { 'Content-Type': 'application/json' } };

/** Sends `count` requests one after the other on `agent`, each ended with `body`. */
async function sequential(t, agent, count, options, body) {
  for (let i = 0; i < count; i++) {
    const req = t.request({ agent, ...options }, `r${i}`);
    t.end(req, `r${i}`, ...(body === undefined ? [] : [body]));
    await t.closed(req);
  }
}

/** A keep-alive agent's requests: the first opens the connection (Node writes it at 'connect'), the rest reuse it. */
const reusing = (count) => ({ fast: count - 1, fallback: { connecting: 1 } });

describe('request bodies on a keep-alive agent: the first request connects, the others are written natively', () => {
  const bodies = [
    ['a string', JSON_BODY],
    ['a non-ASCII string', 'h\u00e9llo w\u00f6rld \u2713'],
    ['a Buffer', Buffer.from(JSON_BODY)],
    ['a Uint8Array', new Uint8Array([104, 105, 0, 255])],
    ['a latin1 string', ['caf\u00e9', 'latin1']],
    ['a hex string', ['68656c6c6f', 'hex']],
  ];
  for (const [what, body] of bodies) {
    test(`POST with ${what}`, () => clientDifferential({
      client: async (t) => {
        const agent = t.agent({ keepAlive: true });
        for (let i = 0; i < 3; i++) {
          const req = t.request({ agent, ...POST }, `r${i}`);
          t.end(req, `r${i}`, ...(Array.isArray(body) ? body : [body]));
          await t.closed(req);
        }
      },
      expect: reusing(3),
    }));
  }

  test('end() with a callback, and end(data, encoding, callback)', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (let i = 0; i < 3; i++) {
        const req = t.request({ agent, ...POST }, `r${i}`);
        const cb = (...args) => t.events.push({ at: `r${i}:end callback`, args: args.map(String) });
        if (i === 2) t.end(req, `r${i}`, 'caf\u00e9', 'utf8', cb);
        else t.end(req, `r${i}`, i === 0 ? cb : JSON_BODY, i === 0 ? undefined : cb);
        await t.closed(req);
      }
    },
    expect: reusing(3),
  }));

  test('GET, HEAD, DELETE and POST without a body (end() with no data)', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (const [i, method] of ['GET', 'GET', 'HEAD', 'DELETE', 'POST', 'PUT'].entries()) {
        const req = t.request({ agent, method }, `${method}${i}`);
        t.end(req, `${method}${i}`);
        await t.closed(req);
      }
    },
    server: {
      answer: (r, socket) => socket.write(r.head.startsWith('HEAD') ? 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n' : OK),
    },
    expect: reusing(6),
  }));

  test("end('') and end(null) are end() without a body, as in Node", () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (const [i, body] of ['', null, ''].entries()) {
        const req = t.request({ agent, method: 'POST' }, `r${i}`);
        t.end(req, `r${i}`, body);
        await t.closed(req);
      }
    },
    expect: reusing(3),
  }));
});

describe('http.get() and http.request() on the global agent', () => {
  test('http.get(): its own end() is Node\'s; under patchEnd it is the package\'s', () => clientDifferential({
    client: async (t) => {
      // A keep-alive agent of the test's own (the global one keeps sockets
      // of other tests): http.get() ends the request itself.
      const agent = t.agent({ keepAlive: true });
      for (let i = 0; i < 3; i++) {
        const req = t.watch(http.get({ host: '127.0.0.1', port: t.port, agent, path: `/x?i=${i}` }), `g${i}`);
        await t.closed(req);
      }
    },
    expect: { fastEnd: { fast: 0, fallback: {} }, patched: reusing(3) },
  }));
});

describe('keep-alive off: every request opens a connection, which Node writes at connect', () => {
  test('agent: false', () => clientDifferential({
    client: (t) => sequential(t, false, 3, POST, JSON_BODY),
    expect: { fast: 0, fallback: { connecting: 3 } },
  }));
  test('an Agent without keepAlive', () => clientDifferential({
    client: async (t) => sequential(t, t.agent({ keepAlive: false }), 3, POST, JSON_BODY),
    expect: { fast: 0, fallback: { connecting: 3 } },
  }));
  test('a response with Connection: close ends the connection; the next request connects again', () => clientDifferential({
    client: async (t) => sequential(t, t.agent({ keepAlive: true }), 3, POST, JSON_BODY),
    server: { answer: (r, socket) => socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok') },
    expect: { fast: 0, fallback: { connecting: 3 } },
  }));
});

describe('maxSockets: 1: queued requests get the socket when it is freed, in order', () => {
  for (const keepAlive of [true, false]) {
    test(`six requests at once, keepAlive ${keepAlive}`, () => clientDifferential({
      client: async (t) => {
        const agent = t.agent({ keepAlive, maxSockets: 1 });
        const reqs = [];
        for (let i = 0; i < 6; i++) {
          const req = t.request({ agent, ...POST, path: `/q${i}` }, `q${i}`);
          t.end(req, `q${i}`, i % 2 === 0 ? JSON_BODY : Buffer.from(`buffer ${i}`));
          reqs.push(t.closed(req));
        }
        await Promise.all(reqs);
      },
      expect: reusing(6),
    }));
  }
});

describe('a socket path (socketPath)', () => {
  test('keep-alive requests over a Unix socket', () => clientDifferential({
    server: { transport: 'unix' },
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (let i = 0; i < 3; i++) {
        const req = t.watch(http.request({ socketPath: t.socketPath, agent, ...POST }), `u${i}`);
        t.end(req, `u${i}`, JSON_BODY);
        await t.closed(req);
      }
    },
    expect: reusing(3),
  }));
});

describe('many requests in flight on parallel keep-alive connections (the benchmark\'s shape)', () => {
  test('32 requests at once, then 32 more on the sockets the agent keeps', () => clientDifferential({
    concurrent: true,
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (const round of [0, 1]) {
        const closed = [];
        for (let i = 0; i < 32; i++) {
          const req = t.request({ agent, ...POST }, `c${round}.${i}`);
          t.end(req, `c${round}.${i}`, JSON_BODY);
          closed.push(t.closed(req));
        }
        await Promise.all(closed);
        // The agent frees each socket on the tick after its response.
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    expect: { fast: 32, fallback: { connecting: 32 } },
  }));
});

describe('the response side and the events around it', () => {
  test("'information' (102, 103) before the response, on a reused socket", () => clientDifferential({
    client: (t) => sequential(t, t.agent({ keepAlive: true }), 3, POST, JSON_BODY),
    server: {
      answer: (r, socket) => socket.write('HTTP/1.1 102 Processing\r\n\r\n' +
                                         'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n' + OK),
    },
    expect: reusing(3),
  }));

  test('a response that arrives in pieces, and a chunked one', () => clientDifferential({
    client: (t) => sequential(t, t.agent({ keepAlive: true }), 3, POST, JSON_BODY),
    server: {
      answer: (r, socket, i) => {
        if (i % 2 === 0) {
          socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n');
        } else {
          socket.write('HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nab');
          setImmediate(() => socket.write('cde'));
        }
      },
    },
    expect: reusing(3),
  }));

  test('a reused socket is given to the next request only after the response ended (reusedSocket)', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true, maxSockets: 2 });
      const closed = [];
      for (let i = 0; i < 5; i++) {
        const req = t.request({ agent, ...POST, path: `/p${i}` }, `p${i}`);
        t.end(req, `p${i}`, `body ${i}`);
        closed.push(t.closed(req));
      }
      await Promise.all(closed);
      t.record('free sockets', Object.values(agent.freeSockets).map((list) => list.length));
    },
    concurrent: true,
    expect: { fast: 3, fallback: { connecting: 2 } },
  }));
});

describe("errors: Node's, with the same events", () => {
  test('a refused connection: ECONNREFUSED on the request', () => clientDifferential({
    client: async (t) => {
      const port = await freePort();
      const agent = t.agent({ keepAlive: true });
      const req = t.watch(http.request({ host: '127.0.0.1', port, agent, ...POST }), 'refused');
      t.end(req, 'refused', JSON_BODY);
      await t.closed(req);
    },
    expect: { fast: 0, fallback: { connecting: 1 } },
  }));

  test('a reset after the request arrived: ECONNRESET on a reused socket', () => clientDifferential({
    client: (t) => sequential(t, t.agent({ keepAlive: true }), 3, POST, JSON_BODY),
    server: { answer: (r, socket, i) => (i === 1 ? socket.resetAndDestroy() : socket.write(OK)) },
    // r1 (reused) is reset; r2 connects again.
    expect: { fast: 1, fallback: { connecting: 2 } },
  }));

  test('the server closes after the request without answering: socket hang up', () => clientDifferential({
    client: (t) => sequential(t, t.agent({ keepAlive: true }), 2, POST, JSON_BODY),
    server: { answer: (r, socket, i) => (i === 1 ? socket.end() : socket.write(OK)) },
    expect: reusing(2),
  }));

  test("req.setTimeout(): 'timeout', then destroy(): the same errors and close", () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (let i = 0; i < 2; i++) {
        const req = t.request({ agent, ...POST }, `t${i}`);
        req.setTimeout(i === 0 ? 5000 : 30, () => req.destroy());
        t.end(req, `t${i}`, JSON_BODY);
        await t.closed(req);
      }
    },
    server: { answer: (r, socket, i) => (i === 0 ? socket.write(OK) : undefined) },
    expect: reusing(2),
  }));

  test("options.timeout: 'timeout', then abort()", () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (let i = 0; i < 2; i++) {
        const req = t.request({ agent, ...POST, timeout: i === 0 ? 5000 : 30 }, `o${i}`);
        req.on('timeout', () => req.abort());
        t.end(req, `o${i}`, JSON_BODY);
        await t.closed(req);
      }
    },
    server: { answer: (r, socket, i) => (i === 0 ? socket.write(OK) : undefined) },
    expect: reusing(2),
  }));

  test('abort() and destroy() right after end(), before the socket: nothing is written', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      for (const [i, how] of ['abort', 'destroy', 'destroy-with-error'].entries()) {
        const req = t.request({ agent, ...POST }, how);
        t.end(req, how, JSON_BODY);
        if (how === 'abort') req.abort();
        else req.destroy(how === 'destroy' ? undefined : new Error(`stop ${i}`));
        await t.closed(req);
      }
      await sequential(t, agent, 1, POST, 'after');
    },
    // Requests destroyed before their socket are written by no one, and
    // counted nowhere (firstPerConnection(): what reached the server).
  }));

  test("destroy() in 'socket' (after end(), before the write) and in 'finish' (after it)", () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const a = t.request({ agent, ...POST }, 'in-socket');
      a.on('socket', () => a.destroy());
      t.end(a, 'in-socket', JSON_BODY);
      await t.closed(a);
      const b = t.request({ agent, ...POST }, 'in-finish');
      b.on('finish', () => b.destroy());
      t.end(b, 'in-finish', JSON_BODY);
      await t.closed(b);
    },
    server: { answer: (r, socket, i) => (i === 0 ? socket.write(OK) : undefined) },
    // 'in-socket': _flush() finds the socket destroyed and writes nothing;
    // 'in-finish' connects again.
    expect: { fast: 0, fallback: { connecting: 2 } },
  }));
});

/** A port nothing listens on. */
function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

describe('request heads: the fields Node renders, rendered natively byte for byte', () => {
  const heads = [
    ['setHeader() fields in their order, array values, numbers, a Cookie array', (req) => {
      req.setHeader('X-First', 1);
      req.setHeader('Accept', ['text/html', 'application/json']);
      req.setHeader('Cookie', ['a=1', 'b=2']);
      req.setHeader('x-lower-case', 'v');
      req.setHeader('X-Empty', '');
    }],
    ['a Content-Length field of its own', (req) => req.setHeader('Content-Length', Buffer.byteLength(JSON_BODY))],
    ['a Connection: close field', (req) => req.setHeader('Connection', 'close')],
    ['a Connection: keep-alive field and a Keep-Alive field', (req) => {
      req.setHeader('Connection', 'keep-alive');
      req.setHeader('Keep-Alive', 'timeout=5');
    }],
    ['removeHeader("Connection")', (req) => req.removeHeader('Connection')],
    ['a Host field of its own', (req) => req.setHeader('Host', 'example.test')],
    ['sendDate', (req) => {
      req.sendDate = true;
    }],
    ['a Date field', (req) => req.setHeader('Date', 'Sun, 06 Nov 1994 08:49:37 GMT')],
    ['non-ASCII latin1 bytes in a field-value', (req) => req.setHeader('X-Name', 'caf\u00e9')],
    ['req.cork() before end()', (req) => req.cork()],
  ];
  for (const [what, prepare] of heads) {
    test(what, () => clientDifferential({
      client: async (t) => {
        const agent = t.agent({ keepAlive: true });
        for (let i = 0; i < 3; i++) {
          const req = t.request({ agent, ...POST }, `h${i}`);
          prepare(req);
          t.end(req, `h${i}`, i === 1 ? Buffer.from(JSON_BODY) : JSON_BODY);
          await t.closed(req);
        }
      },
    }));
  }

  const options = [
    ['setHost: false', { setHost: false }],
    ['auth (an Authorization field)', { auth: 'user:pass' }],
    ['a path with a query and latin1 bytes', { path: '/search?q=caf\u00e9&n=1' }],
    ['a lower-case method', { method: 'post' }],
    ['a custom method', { method: 'PROPFIND' }],
    ['insecureHTTPParser', { insecureHTTPParser: true }],
    ['joinDuplicateHeaders', { joinDuplicateHeaders: true }],
    ['uniqueHeaders with an array value (Node renders the head)', { uniqueHeaders: ['x-multi'], headers: { 'X-Multi': ['a', 'b'] } }],
    ['setDefaultHeaders: false (Node 26; ignored before)', { setDefaultHeaders: false }],
    ['headers as a flat array: Node renders the head when the request is made, chunked', { headers: ['Content-Type', 'application/json', 'X-Id', 7] }],
    ['headers as a flat array with Content-Length', { headers: ['Content-Length', String(Buffer.byteLength(JSON_BODY)), 'X-Id', '7'] }],
    ['Transfer-Encoding: chunked (Node renders and frames the body; written natively)', { headers: { 'Transfer-Encoding': 'chunked' } }],
    ['a GET with a body: no Content-Length, as Node sends it', { method: 'GET' }],
  ];
  for (const [what, extra] of options) {
    test(what, () => clientDifferential({
      client: async (t) => {
        const agent = t.agent({ keepAlive: true });
        for (let i = 0; i < 3; i++) {
          const req = t.request({ agent, ...POST, ...extra }, `o${i}`);
          t.end(req, `o${i}`, i === 1 ? Buffer.from(JSON_BODY) : JSON_BODY);
          await t.closed(req);
        }
      },
      server: {
        // Duplicate fields (joinDuplicateHeaders) and a byte the strict
        // parser refuses in a field-value (insecureHTTPParser).
        answer: (r, socket) => {
          if (/^GET /.test(r.head)) {
            // The body of a GET has no framing: the server sees it as the
            // start of another request and answers once, closing.
            socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
            return;
          }
          socket.write(extra.insecureHTTPParser || what === 'a lower-case method' ?
            'HTTP/1.1 200 OK\r\nX-Odd: a\x01b\r\nContent-Length: 2\r\n\r\nok' :
            'HTTP/1.1 200 OK\r\nX-Dup: 1\r\nX-Dup: 2\r\nContent-Length: 2\r\n\r\nok');
        },
      },
    }));
  }

  test('a request target with a character above U+00FF (Node 20 renders it; Node 26 throws)', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (let i = 0; i < 3; i++) {
        const req = t.request({ agent, ...POST }, `u${i}`);
        try {
          req.path = '/\u2713';
        } catch (err) {
          t.record(`u${i} path`, err.code);
        }
        t.end(req, `u${i}`, i === 1 ? Buffer.from(JSON_BODY) : JSON_BODY);
        await t.closed(req);
      }
    },
  }));
});

describe('where the package steps aside, and why', () => {
  test('Expect: 100-continue in options.headers: Node sends the head at once and the body with it', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const req = t.request({ agent, method: 'POST', headers: { Expect: '100-continue' } }, 'expect');
      t.end(req, 'expect', JSON_BODY);
      await t.closed(req);
    },
    server: {
      answer: (r, socket) => socket.write(/\r\nexpect:/i.test(r.head) ? `HTTP/1.1 100 Continue\r\n\r\n${OK}` : OK),
    },
    expect: { fast: 0, fallback: { connecting: 1, 'field-expect': 1 } },
  }));

  test('Expect set with setHeader(), and as a flat array', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const a = t.request({ agent, method: 'POST' }, 'set');
      a.setHeader('Expect', '100-continue');
      t.end(a, 'set', JSON_BODY);
      await t.closed(a);
      const b = t.request({ agent, method: 'POST', headers: ['Expect', '100-continue'] }, 'array');
      t.end(b, 'array', JSON_BODY);
      await t.closed(b);
    },
    server: {
      answer: (r, socket) => socket.write(/\r\nexpect:/i.test(r.head) ? `HTTP/1.1 100 Continue\r\n\r\n${OK}` : OK),
    },
    expect: { fast: 0, fallback: { connecting: 1, 'field-expect': 2 } },
  }));

  test('write() or flushHeaders() before end(): the head went out', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const a = t.request({ agent, ...POST }, 'write');
      a.write('part one, ');
      t.end(a, 'write', 'part two');
      await t.closed(a);
      const b = t.request({ agent, ...POST }, 'flushHeaders');
      b.flushHeaders();
      t.end(b, 'flushHeaders', JSON_BODY);
      await t.closed(b);
    },
    expect: { fast: 0, fallback: { connecting: 1, 'head-sent': 2 } },
  }));

  test('flushHeaders() after end(): the queue changed, Node writes it', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const req = t.request({ agent, ...POST }, 'after');
      t.end(req, 'after', JSON_BODY);
      req.flushHeaders();
      await t.closed(req);
    },
    expect: { fast: 0, fallback: { connecting: 1, 'queue-changed': 1 } },
  }));

  test('trailers (addTrailers()) on a chunked request: Node frames it', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const req = t.request({ agent, method: 'POST', headers: { 'Transfer-Encoding': 'chunked', Trailer: 'X-Sum' } }, 'trailers');
      req.addTrailers({ 'X-Sum': 'abc' });
      t.end(req, 'trailers', JSON_BODY);
      await t.closed(req);
    },
    expect: { fast: 0, fallback: { connecting: 1, chunked: 1 } },
  }));

  test('strictContentLength', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const req = t.request({ agent, method: 'POST', headers: { 'Content-Length': 3 } }, 'strict');
      req.strictContentLength = true;
      t.end(req, 'strict', 'abc');
      await t.closed(req);
    },
    expect: { fast: 0, fallback: { connecting: 1, 'strict-content-length': 1 } },
  }));

  test("end() in a 'socket' listener: a reused socket is written at once, a new connection by Node", () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      for (let i = 0; i < 3; i++) {
        const req = t.request({ agent, ...POST }, `s${i}`);
        req.on('socket', () => t.end(req, `s${i}`, i === 2 ? Buffer.from(JSON_BODY) : JSON_BODY));
        await t.closed(req);
      }
    },
  }));

  test('a socket.write() wrapped by instrumentation sees the bytes', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      const seen = [];
      const createConnection = agent.createConnection;
      agent.createConnection = function wrapped(...args) {
        const socket = createConnection.apply(this, args);
        const write = socket.write;
        socket.write = function tracedWrite(chunk, ...rest) {
          seen.push(Buffer.byteLength(chunk));
          return write.call(this, chunk, ...rest);
        };
        return socket;
      };
      await sequential(t, agent, 3, POST, JSON_BODY);
      t.record('bytes the wrapper saw', seen.reduce((a, b) => a + b, 0));
    },
    expect: { fast: 0, fallback: { connecting: 1, 'socket-write-replaced': 2 } },
  }));

  test("a request whose end() or _flushOutput() someone replaced: theirs is called", () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const a = t.request({ agent, ...POST }, 'end');
      const end = a.end;
      a.end = function wrappedEnd(...args) {
        t.events.push(`wrapped end: ${args.length} arguments`);
        return end.apply(this, args);
      };
      t.end(a, 'end', JSON_BODY);
      await t.closed(a);
      const b = t.request({ agent, ...POST }, 'flush');
      const flush = b._flushOutput;
      b._flushOutput = function wrappedFlush(socket) {
        t.events.push('wrapped _flushOutput');
        return flush.call(this, socket);
      };
      t.end(b, 'flush', JSON_BODY);
      await t.closed(b);
    },
    expect: {
      // fastEnd: the wrapper is called, and calls Node's end(); patched:
      // the wrapper calls the package's end(), which writes fast.
      fastEnd: { fast: 0, fallback: { connecting: 1, 'request-end-replaced': 1, 'flush-replaced': 1 } },
      patched: { fast: 1, fallback: { connecting: 1, 'flush-replaced': 1 } },
    },
  }));

  test('req.end() replaced to call req.fastEnd() back: the package writes it, no recursion', () => clientDifferential({
    modes: ['fastEnd'],
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const req = t.request({ agent, ...POST }, 'opt-in');
      const end = req.end;
      req.end = function optIn(...args) {
        return t.mode === 'node' ? end.apply(this, args) : this.fastEnd(...args);
      };
      t.end(req, 'opt-in', JSON_BODY);
      await t.closed(req);
    },
    expect: { fastEnd: { fast: 1, fallback: { connecting: 1, 'request-end-replaced': 1 } } },
  }));
});

describe("bad input gets Node's errors, before a byte is written", () => {
  test('an invalid method, path, field-name or field-value throws as in Node', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      const attempts = [
        ['method', () => http.request({ host: '127.0.0.1', port: t.port, agent, method: 'BAD METHOD' })],
        ['path', () => http.request({ host: '127.0.0.1', port: t.port, agent, path: '/a b' })],
        ['header name', () => http.request({ host: '127.0.0.1', port: t.port, agent, headers: { 'Bad Name': 'x' } })],
        ['header value', () => http.request({ host: '127.0.0.1', port: t.port, agent, headers: { 'X-Bad': 'a\r\nb' } })],
      ];
      for (const [what, attempt] of attempts) {
        try {
          attempt();
          t.record(what, 'accepted');
        } catch (err) {
          t.record(what, { code: err.code, class: err.constructor.name });
        }
      }
      // setHeader() on a request that is made: it throws, the request goes
      // out without the field.
      const req = t.request({ agent, ...POST }, 'set');
      for (const [name, value] of [['X-Bad', 'a\nb'], ['Bad Name', 'x'], ['X-Undefined', undefined]]) {
        try {
          req.setHeader(name, value);
        } catch (err) {
          t.record(`setHeader ${name}`, err.code);
        }
      }
      t.end(req, 'set', JSON_BODY);
      await t.closed(req);
    },
  }));

  test('end() with a body of the wrong type throws ERR_INVALID_ARG_TYPE; ending twice emits ERR_STREAM_WRITE_AFTER_END', () => clientDifferential({
    client: async (t) => {
      const agent = t.agent({ keepAlive: true });
      await sequential(t, agent, 1, POST, JSON_BODY);
      const a = t.request({ agent, ...POST }, 'type');
      t.end(a, 'type', 42);
      a.destroy();
      await t.closed(a);
      const b = t.request({ agent, ...POST }, 'twice');
      t.end(b, 'twice', JSON_BODY);
      t.end(b, 'twice', 'again');
      await t.closed(b);
    },
    // The second end() of 'twice' is Node's ('finished'). Its first goes on
    // the socket the destroyed 'type' request left, or a new one (Node 18
    // and 20 destroy that socket, Node 26 keeps it).
    alsoFallback: { 'body-type': 1, finished: 1 },
  }));
});

describe('TLS and HTTP/2 are left to Node', () => {
  test('https.request() on a keep-alive agent: the bytes must be encrypted', () => clientDifferential({
    server: { transport: 'tls' },
    client: async (t) => {
      const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
      try {
        for (let i = 0; i < 3; i++) {
          const req = t.watch(https.request({ host: '127.0.0.1', port: t.port, agent, ...POST }), `tls${i}`);
          t.end(req, `tls${i}`, JSON_BODY);
          await t.closed(req);
        }
      } finally {
        agent.destroy();
      }
    },
    expect: { fast: 0, fallback: { tls: 3 } },
  }));

  test('an HTTP/2 client stream is no ClientRequest: patchEnd leaves it alone', async () => {
    const server = http2.createSecureServer({ ...tlsOptions, allowHTTP1: false }, (req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => res.end(`got ${body}`));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const uninstall = fastResponse.install({ patchEnd: true });
    const before = fastResponse.stats().requests;
    try {
      const session = http2.connect(`https://127.0.0.1:${server.address().port}`, { rejectUnauthorized: false });
      const stream = session.request({ ':method': 'POST', ':path': '/' });
      stream.end(JSON_BODY);
      let answer = '';
      stream.setEncoding('utf8');
      stream.on('data', (d) => { answer += d; });
      await new Promise((resolve) => stream.on('end', resolve));
      session.close();
      assert.equal(answer, `got ${JSON_BODY}`);
      assert.deepEqual(fastResponse.stats().requests, before);
    } finally {
      uninstall();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('fastResponse.end() and write() are for responses', () => {
  test('on a ClientRequest they are the request\'s own end() and write() (not-http1)', async () => {
    const received = [];
    const server = net.createServer((socket) => {
      let got = '';
      socket.on('data', (d) => {
        got += d.toString('latin1');
        if (got.endsWith('0\r\n\r\n')) {
          received.push(got);
          socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
        }
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const post = (write, end) => new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: server.address().port, method: 'POST', path: '/', agent: false },
                               (res) => res.resume().on('end', resolve));
      req.on('error', reject);
      write(req, 'h\u00e9llo ');
      write(req, Buffer.from('world'));
      end(req, '!');
    });
    try {
      await post((req, d) => req.write(d), (req, d) => req.end(d));
      const before = fastResponse.stats().reasons['not-http1'] || 0;
      await post(fastResponse.write, fastResponse.end);
      assert.equal((fastResponse.stats().reasons['not-http1'] || 0) - before, 3);
      assert.equal(received.length, 2);
      assert.equal(received[1], received[0]);
    } finally {
      server.close();
    }
  });
});

describe('a body larger than the socket takes at once', () => {
  test('8 MiB: the rest goes to socket.write(), the same bytes and events', async () => {
    const big = Buffer.alloc(8 * 1024 * 1024, 'x');
    const runs = await clientDifferential({
      client: async (t) => {
        const agent = t.agent({ keepAlive: true });
        for (let i = 0; i < 2; i++) {
          const req = t.request({ agent, ...POST }, `big${i}`);
          t.end(req, `big${i}`, i === 0 ? 'small' : big);
          await t.closed(req);
        }
      },
      expect: { fast: 1, fallback: { connecting: 1 } },
    });
    if (CLIENT_PATH_GAINS) {
      for (const mode of ['fastEnd', 'patched']) assert.equal(runs[mode].stats.partial, 1, `${mode}: a partial write`);
    }
  });
});
