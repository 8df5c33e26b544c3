'use strict';

// Pipelined bursts through the socket's FastResponse writer (lib/pipeline.js)
// against Node's own res.end(): a client sends bursts of requests, each once
// the responses to the one before arrived (as wrk does). The first response
// seen waiting behind another shows the socket pipelining (Node's path);
// from the next request on the socket numbers its requests and the queued
// responses join its batch. Every case: the same bytes, events ('prefinish',
// 'finish', 'close', callbacks), state at 'finish' (socket.bytesWritten
// included) and return values as Node's own.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');

const { differential, get } = require('./helpers/differential');

const BODY = 'hello world';

/** `count` GET requests for `paths` in turn, as one burst. */
function burst(paths, extra = '') {
  return paths.map((p) => (p.startsWith('HEAD ') ? get(p.slice(5), extra, 'HEAD') : get(p, extra))).join('');
}

const fourBursts = [burst(['/1', '/2', '/3']), burst(['/4', '/5', '/6', '/7']),
                    burst(['/8', '/9', '/10', '/11']), burst(['/12', '/13'])];

// The first burst on a connection: its second response goes Node's way (it
// shows the socket pipelining; its request was parsed before the numbering
// began), the third joins the new batch: 1 'not-current'.
const FIRST_BURST_QUEUED = 1;

for (const mode of ['fast', 'fastEnd', 'patched']) {
  describe(`pipelined bursts (${mode})`, () => {
    test('bursts of GETs, handlers end at once: every response but the first burst\'s second is fast', () =>
      differential({
        mode,
        request: fourBursts,
        handler: (req, res, ctx) => ctx.api.end(res, `${BODY} ${req.url}`),
        fast: 13 - FIRST_BURST_QUEUED,
        fallback: { 'not-current': FIRST_BURST_QUEUED },
      }));

    test('writeHead() then end(): Node\'s head, the addon\'s batch', () =>
      differential({
        mode,
        request: fourBursts,
        handler: (req, res, ctx) => {
          res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Url': req.url });
          ctx.api.end(res, Buffer.from(`buffer body ${req.url}`));
        },
        fast: 13 - FIRST_BURST_QUEUED,
        fallback: { 'not-current': FIRST_BURST_QUEUED },
      }));
  });
}

// A connection's only burst (a client that pipelines once, then closes):
// the first response is the socket's current one, the second shows the
// socket pipelining (Node's path), and the 14 after it join the batch,
// written with one writev(2) at the third's turn: 3 writes to the kernel
// where Node's path makes 16.
for (const mode of ['fast', 'fastEnd', 'patched']) {
  test(`a connection's only burst of 16 (${mode}): the 14 after the second in one writev(2)`, async () => {
    const paths = Array.from({ length: 16 }, (_, i) => `/${i}`);
    const { node, fast } = await differential({
      mode,
      request: burst(paths.slice(0, 15)) + get('/15', 'Connection: close\r\n'),
      expect: { responses: 16 },
      handler: (req, res, ctx) => ctx.api.end(res, `${BODY} ${req.url}`),
      fast: 15,
      fallback: { 'not-current': 1 },
    });
    assert.equal(node.syscalls, 16);
    assert.equal(fast.syscalls, 3);
    assert.equal(fast.stats.fast, 15);
  });
}

// TLS: the addon cannot write an encrypted socket (its descriptor is the
// TCP connection's), so no writer: each burst's first response steps aside
// ('tls') and the queued ones are Node's ('not-current'); the client
// decrypts Node's bytes.
test('TLS: pipelined bursts are Node\'s, no plaintext reaches the connection', () =>
  differential({
    transport: 'tls',
    request: [burst(['/1', '/2', '/3', '/4']), burst(['/5', '/6', '/7', '/8'])],
    handler: (req, res, ctx) => ctx.api.end(res, `${BODY} ${req.url}`),
    fast: 0,
    fallback: { tls: 2, 'not-current': 6 },
  }));

// Instrumentation that wraps socket.write() must see every byte: no batch
// goes past it ('socket-write-replaced' for each burst's first response,
// Node's queue for the rest).
test('a socket whose write() is wrapped: pipelined bursts are Node\'s', () =>
  differential({
    request: [burst(['/1', '/2', '/3', '/4']), burst(['/5', '/6', '/7', '/8'])],
    setup: (server) => server.on('connection', (socket) => {
      const write = socket.write;
      socket.write = function wrappedWrite(...args) {
        return write.apply(this, args);
      };
    }),
    handler: (req, res, ctx) => ctx.api.end(res, `${BODY} ${req.url}`),
    fast: 0,
    fallback: { 'socket-write-replaced': 2, 'not-current': 6 },
  }));

describe('pipelined bursts: what a burst holds', () => {
  test('HEAD, 204 and 304 inside a burst: no body on the wire', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/c', 'HEAD /head', '/204', '/304', '/d'])],
      handler: (req, res, ctx) => {
        if (req.url === '/204') res.statusCode = 204;
        if (req.url === '/304') res.statusCode = 304;
        ctx.api.end(res, `body of ${req.url}`);
      },
      fast: 6,
      fallback: { 'not-current': 1 },
    }));

  test('string bodies in UTF-8 (multi-byte), latin1 and hex, a Uint8Array', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/utf8', '/latin1', '/hex', '/bytes'])],
      handler: (req, res, ctx) => {
        if (req.url === '/utf8') return ctx.api.end(res, 'h\u00e9llo \u2713 \u{1F600}');
        if (req.url === '/latin1') return ctx.api.end(res, 'caf\u00e9', 'latin1');
        if (req.url === '/hex') return ctx.api.end(res, '68656c6c6f', 'hex');
        if (req.url === '/bytes') return ctx.api.end(res, new Uint8Array([104, 105]));
        return ctx.api.end(res, BODY);
      },
      fast: 5,
      fallback: { 'not-current': 1 },
    }));

  test('writeHead() without Content-Length: each body framed as one chunk', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/c', '/d', '/e'])],
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        ctx.api.end(res, `chunk of ${req.url}`);
      },
      fast: 4,
      fallback: { 'not-current': 1 },
    }));

  test('send(), template() and json() in a burst', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/send', '/template', '/json', '/end'])],
      handler: (req, res, ctx) => {
        if (req.url === '/send') return ctx.api.send(res, 200, { 'Content-Type': 'text/plain' }, 'sent');
        if (req.url === '/template') {
          return ctx.api.template(201, { 'Content-Type': 'text/plain' }).send(res, 'from a template');
        }
        if (req.url === '/json') return ctx.api.json(res, 200, { ok: true });
        return ctx.api.end(res, BODY);
      },
      // Node 18: send() and template() are writeHead() + end(), and end()
      // writes the body of Node's head: the same counts.
      fast: 5,
      fallback: { 'not-current': 1 },
    }));

  test('a request with Connection: close ends the burst: nothing after it is written', () =>
    differential({
      request: [burst(['/a', '/b']), get('/c') + get('/close', 'Connection: close\r\n') + get('/after') + get('/after2')],
      expect: { responses: 4 },
      handler: (req, res, ctx) => ctx.api.end(res, `body of ${req.url}`),
      // The parser stops after a request with Connection: close: /after
      // and /after2 are never answered, by Node either.
      fast: 3,
      fallback: { 'not-current': 1 },
    }));

  test('a handler that sets Connection: close inside a burst: the responses after it are never written', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/c', '/close', '/d', '/e'])],
      expect: { responses: 4 },
      handler: (req, res, ctx) => {
        if (req.url === '/close') res.setHeader('Connection', 'close');
        ctx.api.end(res, `body of ${req.url}`);
      },
      // /close joins the batch and closes it (`_last`): /d and /e are
      // ended, queued behind it and never written, by Node either.
      fast: 3,
      fallback: { 'not-current': 3 },
    }));

  test('maxRequestsPerSocket reached inside a burst: Connection: close, then Node\'s 503s', () =>
    differential({
      request: [burst(['/1', '/2']), burst(['/3', '/4', '/5', '/6'])],
      expect: { responses: 4 },
      setup: (server) => { server.maxRequestsPerSocket = 4; },
      handler: (req, res, ctx) => ctx.api.end(res, `body of ${req.url}`),
      fast: 3,
      fallback: { 'not-current': 1 },
    }));

  test('a 4 MiB body inside a burst: the next response\'s bytes come after it, none interleave', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/c', '/big', '/d', '/e'])],
      handler: (req, res, ctx) => ctx.api.end(res, req.url === '/big' ? 'x'.repeat(4 << 20) : `body of ${req.url}`),
      fast: 5,
      fallback: { 'not-current': 1 },
    }));

  test('handlers that end in reverse order: request order on the wire, the early ones take Node\'s path', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/1', '/2', '/3'])],
      handler: (req, res, ctx) => {
        const delay = { '/1': 30, '/2': 15, '/3': 0 }[req.url] ?? 0;
        setTimeout(() => ctx.api.end(res, `body of ${req.url}`), delay);
      },
      // Burst 1 ends on timers, each response current by then. Burst 2: /3
      // and /2 end before their predecessors (Node's path); /1 is current
      // when it ends.
      fast: 3,
      fallback: { 'not-current': 2 },
    }));

  test('a response that streams while the ones after it are complete', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/stream', '/x', '/y'])],
      handler: (req, res, ctx) => {
        if (req.url !== '/stream') return ctx.api.end(res, `body of ${req.url}`);
        res.write('part one, ');
        setTimeout(() => ctx.api.end(res, 'part two'), 10);
      },
      // /stream's end() comes after its head went out ('head-sent', or on
      // Node 26 a corked socket); /x and /y waited behind it.
      fast: 1,
      fallback: [{ 'not-current': 3, 'head-sent': 1 }, { 'not-current': 3, 'socket-busy': 1 }],
    }));

  test('the end() callback and the events of each response, in request order', async () => {
    const { fast } = await differential({
      request: [burst(['/a', '/b']), burst(['/c', '/d', '/e'])],
      handler: (req, res, ctx) => ctx.api.end(res, `body of ${req.url}`, ctx.callback('ended')),
      fast: 4,
      fallback: { 'not-current': 1 },
    });
    const finishes = fast.rec.events.filter((e) => typeof e === 'string' && e.endsWith(':finish'));
    assert.deepEqual(finishes, ['res0:finish', 'res1:finish', 'res2:finish', 'res3:finish', 'res4:finish']);
  });

  // A queued response the handler destroys after end() (found by a
  // new-user check: the batch went out whole at the turn of the response
  // before it). Node 18 to 22 destroy the socket when the response becomes
  // current, nothing of it written; Node 24 and later write it, then
  // stop writing when given an error (the connection idles: the server's
  // timeout closes it), or go on without one. Nothing may have been
  // written ahead of it.
  for (const withError of [false, true]) {
    test(`a queued response destroyed after end()${withError ? ' with an error' : ''}: nothing written ` +
         'ahead of it', () =>
      differential({
        request: [burst(['/a', '/b']), burst(['/c', '/d', '/e', '/f']) + get('/g', 'Connection: close\r\n')],
        expect: { untilClose: true },
        setup: (server) => { server.setTimeout(300); },
        handler: (req, res, ctx) => {
          ctx.api.end(res, `body of ${req.url}`);
          if (req.url === '/e') res.destroy(withError ? new Error('destroyed by the handler') : undefined);
        },
        fast: 6,
        fallback: { 'not-current': 1 },
      }));
  }

  test('the client resets the connection during its second burst: Node\'s errors and events', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/c', '/d', '/e'])],
      expect: { untilClose: true },
      handler: (req, res, ctx) => {
        // The client is gone (RST) before /c is written; /d and /e are
        // ended behind it, never to become current.
        if (req.url === '/c') ctx.clientSocket().resetAndDestroy();
        ctx.api.end(res, `body of ${req.url}`);
      },
      // /c's writev(2) fails (handed to socket.write(), which reports the
      // error and destroys the socket): /d and /e see a destroyed socket.
      fast: 2,
      partial: 1,
      fallback: { 'not-current': 3 },
    }));

  test('the client resets the connection while responses wait in the batch: Node\'s errors and events', () =>
    differential({
      request: [burst(['/a', '/b']), burst(['/c', '/d', '/e'])],
      expect: { untilClose: true },
      handler: (req, res, ctx) => {
        ctx.api.end(res, `body of ${req.url}`);
        // /c went out; /d and /e wait in the batch when the client goes.
        if (req.url === '/e') ctx.clientSocket().resetAndDestroy();
      },
      // /d's turn: its writev(2) fails and socket.write() reports it.
      fast: 4,
      fallback: { 'not-current': 1 },
    }));

  // What socket.bytesWritten counts of the failed write (compared at each
  // 'close'): Node's write of a queued HEAD response is its head alone, one
  // small string, which counts nothing when it fails; a Buffer body counts
  // its bytes (lib/complete.js failedWriteCounted()).
  for (const [name, paths, body] of [
    ['HEAD requests', ['/a', '/b', '/c', 'HEAD /d', 'HEAD /e'], (url) => `body of ${url}`],
    ['Buffer bodies', ['/a', '/b', '/c', '/d', '/e'], (url) => Buffer.from(`body of ${url}`)],
  ]) {
    test(`the client resets the connection while ${name} wait in the batch: bytesWritten as Node's`, () =>
      differential({
        request: [burst(paths.slice(0, 2)), burst(paths.slice(2))],
        expect: { untilClose: true },
        handler: (req, res, ctx) => {
          ctx.api.end(res, body(req.url));
          if (req.url === '/e') ctx.clientSocket().resetAndDestroy();
        },
        fast: 4,
        fallback: { 'not-current': 1 },
      }));
  }
});
