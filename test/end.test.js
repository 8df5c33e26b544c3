'use strict';

// fastResponse.end(res, data[, encoding][, callback]) against Node's own
// res.end(data, encoding, callback): every case is differential (same bytes,
// events, state and errors), and every case says whether the fast run took
// the fast path or which fallback it took.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const http2 = require('node:http2');

const fastResponse = require('..');
const { differential, get, withTimeout, TIMEOUT_MS, parseResponses, requestMethods } =
  require('./helpers/differential');
const nodeRules = require('./helpers/node-rules');
const { FRAMES_CHUNK } = require('../lib/chunked-buffer');
const { ENCODED_MIN_UNITS } = require('../lib/body');
const { byHeadRenderer, headRuleFallback, refusedHead, removedConnection } = nodeRules;

const BODY = 'hello world';
const MULTIBYTE = 'h\u00e9llo w\u00f6rld \u2713 \u{1F600} \u4e2d\u6587';

/** A handler that ends the response with `args` after `setup(res)`. */
function ending(setup, ...args) {
  return (req, res, ctx) => {
    if (setup) setup(res, req);
    ctx.api.end(res, ...args);
  };
}

describe('methods and status codes', () => {
  test('GET 200: head and body in one write, Content-Length, keep-alive', () =>
    differential({ request: get(), handler: ending(null, BODY) }));

  test('HEAD 200: no body on the wire, _contentLength still the body length', () =>
    differential({ request: get('/', '', 'HEAD'), handler: ending(null, BODY) }));

  for (const status of [201, 204, 304, 404, 500]) {
    test(`status ${status} set with res.statusCode${status === 204 || status === 304 ? ' (no body sent)' : ''}`, () =>
      differential({ request: get(), handler: ending((res) => { res.statusCode = status; }, BODY) }));
  }

  test('HEAD with status 404', () =>
    differential({ request: get('/', '', 'HEAD'), handler: ending((res) => { res.statusCode = 404; }, BODY) }));

  test('status code given as a numeric string ("201") is rendered as Node renders it', () =>
    differential({ request: get(), handler: ending((res) => { res.statusCode = '201'; }, BODY) }));

  test('unknown status code 599 gets the reason phrase "unknown"', () =>
    differential({ request: get(), handler: ending((res) => { res.statusCode = 599; }, BODY) }));

  test('a fractional status code (200.7) is truncated as writeHead() does', () =>
    differential({ request: get(), handler: ending((res) => { res.statusCode = 200.7; }, BODY) }));

  test('a statusMessage that is a number', () =>
    differential({ request: get(), handler: ending((res) => { res.statusMessage = 123; }, BODY) }));

  test('custom statusMessage', () =>
    differential({ request: get(), handler: ending((res) => {
      res.statusCode = 202;
      res.statusMessage = 'Accepted For Later';
    }, BODY) }));

  test('statusMessage with latin1 bytes and a utf8 string body: the status line goes out UTF-8 encoded', () =>
    differential({ request: get(), handler: ending((res) => { res.statusMessage = '\u00c7a va tr\u00e8s bien'; }, BODY) }));

  test('statusMessage with latin1 bytes and a Buffer body: the status line goes out as latin1', () =>
    differential({ request: get(), handler: ending((res) => { res.statusMessage = '\u00c7a va'; }, Buffer.from(BODY)) }));
});

describe('connection handling', () => {
  test('HTTP/1.0 without keep-alive: no Content-Length, Connection: close, server closes', () =>
    differential({ request: get('/', '', 'GET', '1.0'), handler: ending(null, BODY) }));

  test('HTTP/1.0 with Connection: keep-alive (Node still closes: no chunked default)', () =>
    differential({ request: get('/', 'Connection: keep-alive\r\n', 'GET', '1.0'), handler: ending(null, BODY) }));

  test('HTTP/1.0 keep-alive with a user Content-Length keeps the connection', () =>
    differential({
      request: get('/', 'Connection: keep-alive\r\n', 'GET', '1.0'),
      handler: ending((res) => res.setHeader('Content-Length', Buffer.byteLength(BODY)), BODY),
    }));

  test('HTTP/1.1 with Connection: close: Connection: close, server closes', () =>
    differential({ request: get('/', 'Connection: close\r\n'), handler: ending(null, BODY) }));

  test('user Connection: close on a keep-alive request closes the connection', () =>
    differential({ request: get(), handler: ending((res) => res.setHeader('Connection', 'close'), BODY) }));

  test('user Connection: keep-alive (no Keep-Alive field added)', () =>
    differential({ request: get(), handler: ending((res) => res.setHeader('Connection', 'keep-alive'), BODY) }));

  test('user Connection: keep-alive on an HTTP/1.0 request keeps it open', () =>
    differential({
      request: get('/', '', 'GET', '1.0'),
      handler: ending((res) => {
        res.setHeader('Connection', 'keep-alive');
        res.setHeader('Content-Length', Buffer.byteLength(BODY));
      }, BODY),
    }));

  test('user Keep-Alive field replaces the default one', () =>
    differential({ request: get(), handler: ending((res) => res.setHeader('Keep-Alive', 'timeout=30'), BODY) }));

  test('removeHeader("Connection"): no Connection field, connection kept', () =>
    differential({
      request: get(),
      handler: ending((res) => res.removeHeader('Connection'), BODY),
      ...removedConnection(),
    }));

  // matchHeader() clears `_removedConnection` for a Connection field, and
  // `_defaultKeepAlive` for a Keep-Alive field: the state after the head is
  // compared too.
  test('removeHeader("Connection"), then a Connection field of the caller\'s', () =>
    differential({
      request: get(),
      handler: ending((res) => {
        res.removeHeader('Connection');
        res.setHeader('Connection', 'keep-alive');
      }, BODY),
      ...removedConnection(),
    }));

  test('removeHeader("Connection"), then a Keep-Alive field of the caller\'s', () =>
    differential({
      request: get(),
      handler: ending((res) => {
        res.removeHeader('Connection');
        res.setHeader('Keep-Alive', 'timeout=9');
      }, BODY),
      ...removedConnection(),
    }));

  for (const timeout of [2500, 999, 0, 65000]) {
    test(`server.keepAliveTimeout = ${timeout}: Keep-Alive: timeout=floor(t/1000) or none`, () =>
      differential({
        request: get(),
        setup: (server) => { server.keepAliveTimeout = timeout; },
        handler: ending(null, BODY),
      }));
  }

  test('server.maxRequestsPerSocket = 2 with three requests: max=2, then Connection: close, then 503', () =>
    differential({
      request: get('/1') + get('/2') + get('/3'),
      // Node itself leaves the connection open after "Connection: close"
      // here (until the keep-alive timeout): do not wait for that.
      expect: { responses: 3, waitForClose: false },
      setup: (server) => { server.maxRequestsPerSocket = 2; },
      // Deferred so that each response is the socket's current one.
      handler: (req, res, ctx) => setImmediate(() => ctx.api.end(res, `body of ${req.url}`)),
      fast: 2,
    }));

  test('server.keepAliveTimeout = 1.5 (rounds down to timeout=0)', () =>
    differential({
      request: get(),
      setup: (server) => { server.keepAliveTimeout = 1.5; },
      handler: ending(null, BODY),
    }));

  test('server.maxRequestsPerSocket = 2.5: Node prints max=2.5, the fast path steps aside', () =>
    differential({
      request: get(),
      setup: (server) => { server.maxRequestsPerSocket = 2.5; },
      handler: ending(null, BODY),
      ...headRuleFallback('keep-alive-value'),
    }));

  test('Connection: Upgrade on an HTTP/1.0 request', () =>
    differential({
      request: get('/', '', 'GET', '1.0'),
      handler: ending((res) => res.setHeader('Connection', 'Upgrade'), BODY),
    }));

  test('two Connection fields, keep-alive and close: the connection closes', () =>
    differential({
      request: get(),
      handler: ending((res) => res.setHeader('Connection', ['keep-alive', 'close']), BODY),
    }));

  test('two Connection fields on an HTTP/1.0 request, close and keep-alive', () =>
    differential({
      request: get('/', '', 'GET', '1.0'),
      handler: ending((res) => res.setHeader('Connection', ['close', 'keep-alive']), BODY),
    }));

  test('Expect: 100-continue handled by a checkContinue listener that answers without 100: Connection: close', () =>
    differential({
      request: 'POST / HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n',
      expect: { responses: 1 },
      setup: (server) => server.on('checkContinue', (req, res) => server.emit('request', req, res)),
      handler: ending(null, BODY),
    }));

  test('three pipelined requests in one TCP write, ended at once: the 2nd waits (not-current), the 3rd joins the socket\'s batch', () =>
    differential({
      request: get('/a') + get('/b', '', 'HEAD') + get('/c'),
      handler: (req, res, ctx) => ctx.api.end(res, `body of ${req.url}`),
      fast: 2,
      fallback: { 'not-current': 1 },
    }));

  test('three pipelined requests in one TCP write, each ended when it is current: all fast', () =>
    differential({
      request: get('/a') + get('/b', '', 'HEAD') + get('/c', 'Connection: close\r\n'),
      handler: (req, res, ctx) => setImmediate(() => ctx.api.end(res, `body of ${req.url}`)),
    }));

  test('a pipelined response waiting behind its predecessor falls back, the predecessor is fast', () =>
    differential({
      request: get('/first') + get('/second'),
      handler: (req, res, ctx) => {
        if (req.url === '/first') {
          // Ended only after the second response was ended (and queued).
          return ctx.signal('second-ended').promise.then(() => ctx.api.end(res, 'first'));
        }
        ctx.api.end(res, 'second');
        ctx.signal('second-ended').resolve();
      },
      fast: 1,
      fallback: { 'not-current': 1 },
    }));

  test('request with Expect: 100-continue: 100 Continue, then the response', () =>
    differential({
      request: 'POST / HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc',
      handler: (req, res, ctx) => {
        req.resume();
        req.on('end', () => ctx.api.end(res, BODY));
      },
    }));

  test('request with Expect: 100-continue answered without reading the body', () =>
    differential({
      request: 'POST / HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n',
      expect: { responses: 1 },
      handler: ending(null, BODY),
    }));
});

describe('response state set by the application', () => {
  test('res.shouldKeepAlive = false: Connection: close, server closes', () =>
    differential({ request: get(), handler: ending((res) => { res.shouldKeepAlive = false; }, BODY) }));

  test('res.useChunkedEncodingByDefault = false: no Content-Length, close-delimited', () =>
    differential({
      request: get(),
      expect: { untilClose: true },
      handler: ending((res) => { res.useChunkedEncodingByDefault = false; }, BODY),
    }));

  test('writeHead with a latin1 field value, then a utf8 string body: the rendered head goes out UTF-8 encoded', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'X-Latin1': 'caf\u00e9', 'Content-Length': Buffer.byteLength(MULTIBYTE) });
        ctx.api.end(res, MULTIBYTE);
      },
    }));

  test('writeHead with a latin1 field value, then a Buffer body', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'X-Latin1': 'caf\u00e9', 'Content-Length': 5 });
        ctx.api.end(res, Buffer.from('hello'));
      },
    }));

  test('writeHead with 204 and a body: nothing after the head', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(204, { 'X-A': 'b' });
        ctx.api.end(res, BODY);
      },
    }));

  test('POST whose body the handler never reads, then a pipelined GET', () =>
    differential({
      request: 'POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nabcde' + get('/b'),
      handler: (req, res, ctx) => setImmediate(() => ctx.api.end(res, `body of ${req.url}`)),
    }));

  test('server option rejectNonStandardBodyWrites with a HEAD request: ERR_HTTP_BODY_NOT_ALLOWED as Node', () =>
    differential({
      request: get('/', '', 'HEAD'),
      serverOptions: { rejectNonStandardBodyWrites: true },
      handler: (req, res, ctx) => {
        ctx.attempt('end with a body', () => ctx.rawApi.end(res, BODY));
        if (!res.writableEnded) res.end();
      },
      fast: 0,
      fallback: { 'body-not-allowed': 1 },
    }).then(({ node }) => assert.equal(node.rec.calls[0].threw.code, 'ERR_HTTP_BODY_NOT_ALLOWED')));

  // The socket's Writable knows no 'bogus' encoding, for a Buffer too.
  for (const [what, body] of [['a string', BODY], ['a Buffer', Buffer.from(BODY)]]) {
    test(`${what} with an unknown encoding: the same result as res.end`, () =>
      differential({
        request: get('/', 'Connection: close\r\n'),
        expect: { untilClose: true },
        allowEmpty: true,
        handler: (req, res, ctx) => {
          ctx.attempt('end with a bogus encoding', () => ctx.rawApi.end(res, body, 'bogus'));
          if (!res.writableEnded) res.end();
          else if (!res.writableFinished) setImmediate(() => res.destroy());
        },
        fast: 0,
        fallback: { encoding: 1 },
      }).then(({ node }) => assert.equal(node.rec.calls[0].threw.code, 'ERR_UNKNOWN_ENCODING')));
  }

  // A string without an encoding goes out in the socket's default encoding.
  test('a socket whose default encoding is latin1: Node\'s bytes', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.socket.setDefaultEncoding('latin1');
        ctx.api.end(res, 'caf\u00e9 \u2713');
      },
      fast: 0,
      fallback: { encoding: 1 },
    }));

  test('end(callback) without data: Node\'s own end, counted no-body (as under patchEnd)', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => ctx.api.end(res, ctx.callback()),
      fast: 0,
      fallback: { 'no-body': 1 },
    }));
});

describe('bodies and encodings', () => {
  test('utf8 string with multi-byte characters: Content-Length in bytes', () =>
    differential({ request: get(), handler: ending(null, MULTIBYTE) }));

  test('utf8 given explicitly', () =>
    differential({ request: get(), handler: ending(null, MULTIBYTE, 'utf8') }));

  for (const encoding of ['utf-8', 'UTF8']) {
    test(`encoding spelled "${encoding}" (Node sends the head separately, as latin1)`, () =>
      differential({
        request: get(),
        handler: ending((res) => res.setHeader('X-Latin1', 'caf\u00e9'), MULTIBYTE, encoding),
      }));
  }

  for (const encoding of ['latin1', 'binary', 'ascii']) {
    test(`${encoding} encoding`, () =>
      differential({ request: get(), handler: ending(null, 'caf\u00e9 cr\u00e8me \u00ff', encoding) }));
  }

  // From ENCODED_MIN_UNITS units, a UTF-8 body beyond ASCII is given to
  // the addon as Node's own encoding of it on Node 24+ (lib/body.js
  // bodyArgs(), BODY_ENCODED); shorter ones as the string. Both sides of
  // the limit, text below U+0100 (the strings Node 24+ encodes with
  // simdutf), above it and lone surrogates, each head path.
  const AT_LIMIT = ENCODED_MIN_UNITS;
  const beyondAscii = {
    'latin1 text': (units) => 'na\u00efve '.repeat(Math.ceil(units / 6)).slice(0, units),
    'CJK and emoji': (units) => '\u4e2d\u6587 \u{1F600}x'.repeat(Math.ceil(units / 6)).slice(0, units),
    'lone surrogates at both ends and inside': (units) =>
      '\udc00' + 'caf\u00e9\ud800'.repeat(Math.ceil(units / 5)).slice(0, units - 2) + '\ud83d',
  };
  for (const [name, text] of Object.entries(beyondAscii)) {
    for (const units of [AT_LIMIT - 1, AT_LIMIT, 4 * AT_LIMIT + 3]) {
      const body = text(units);
      assert.equal(body.length, units);
      test(`utf8 body beyond ASCII, ${name}, ${units} units (limit ${AT_LIMIT})`, () =>
        differential({ request: get(), handler: ending(null, body) }));
    }
    const body = text(AT_LIMIT + 1);
    test(`utf8 body beyond ASCII at the limit, ${name}: a latin1 field value (the head UTF-8 encoded), HEAD, writeHead() before, chunked`, async () => {
      await differential({ request: get(), handler: ending((res) => res.setHeader('X-Latin1', 'caf\u00e9'), body, 'utf8') });
      await differential({ request: get('/', '', 'HEAD'), handler: ending(null, body) });
      await differential({ request: get(), handler: ending((res) => res.writeHead(200, { 'X-Latin1': 'caf\u00e9', 'Content-Length': Buffer.byteLength(body) }), body) });
      await differential({ request: get(), handler: ending((res) => res.writeHead(200, { 'X-Latin1': 'caf\u00e9' }), body) });
    });
  }

  test('latin1 encoding with characters above U+00FF (Node keeps the low byte)', () =>
    differential({ request: get(), handler: ending(null, 'a\u0100b\u20acc', 'latin1') }));

  test('hex encoding', () =>
    differential({ request: get(), handler: ending(null, '48656c6c6f2c20776f726c6421ff00', 'hex') }));

  test('base64 encoding', () =>
    differential({ request: get(), handler: ending(null, Buffer.from(MULTIBYTE).toString('base64'), 'base64') }));

  test('base64url encoding', () =>
    differential({ request: get(), handler: ending(null, Buffer.from([0xfb, 0xff, 0xfe, 1, 2]).toString('base64url'), 'base64url') }));

  test('utf16le encoding', () =>
    differential({ request: get(), handler: ending(null, MULTIBYTE, 'utf16le') }));

  test('invalid hex (byteLength disagrees with the bytes): falls back, equal bytes', () =>
    differential({ request: get('/', 'Connection: close\r\n'), handler: ending(null, 'zz', 'hex'), fast: 0, fallback: { encoding: 1 } }));

  test('empty string: falls back to Node (empty-body), equal bytes', () =>
    differential({ request: get(), handler: ending(null, ''), fast: 0, fallback: { 'empty-body': 1 } }));

  test('Buffer body', () =>
    differential({ request: get(), handler: ending(null, Buffer.from(MULTIBYTE)) }));

  test('empty Buffer body: falls back to Node (empty-body), Content-Length: 0', () =>
    differential({ request: get(), handler: ending(null, Buffer.alloc(0)), fast: 0, fallback: { 'empty-body': 1 } }));

  test('a Uint8Array over a detached ArrayBuffer: Node\'s behaviour (empty-body fallback)', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        const u = new Uint8Array(10);
        structuredClone(u.buffer, { transfer: [u.buffer] });
        ctx.api.end(res, u);
      },
      allowEmpty: true,
      fast: 0,
      fallback: { 'empty-body': 1 },
    }));

  test('Uint8Array body', () =>
    differential({ request: get(), handler: ending(null, new Uint8Array([104, 105, 0, 255, 10])) }));

  test('Uint8Array view into a larger buffer: only the view is sent', () =>
    differential({ request: get(), handler: ending(null, new Uint8Array(Buffer.from('xxhello worldxx').buffer, 2, 11)) }));

  test('Buffer slice of a pooled buffer', () =>
    differential({ request: get(), handler: ending(null, Buffer.from('0123456789abcdef').subarray(3, 9)) }));

  test('body larger than the socket buffer (8 MiB string, client reads late): partial write, exact bytes', () => {
    const big = 'abcdefghijklmnopqrstuvwxyz0123456789\u00e9\n'.repeat(8 * 1024 * 1024 / 39);
    return differential({
      request: get(),
      pauseClientUntil: 'ended',
      handler: (req, res, ctx) => {
        ctx.api.end(res, big, ctx.callback());
        ctx.signal('ended').resolve();
      },
      partial: 1,
    });
  });

  test('body larger than the socket buffer (8 MiB Buffer, client reads late): partial write, exact bytes', () => {
    const big = Buffer.alloc(8 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 13)) & 0xff;
    return differential({
      request: get(),
      pauseClientUntil: 'ended',
      handler: (req, res, ctx) => {
        res.setHeader('Content-Type', 'application/octet-stream');
        ctx.api.end(res, big, ctx.callback());
        ctx.signal('ended').resolve();
      },
      partial: 1,
    });
  });

  test('8 MiB body to an HTTP/1.0 client (connection closes after the partial write)', () =>
    differential({
      request: get('/', '', 'GET', '1.0'),
      pauseClientUntil: 'ended',
      handler: (req, res, ctx) => {
        ctx.api.end(res, Buffer.alloc(8 * 1024 * 1024, 'x'));
        ctx.signal('ended').resolve();
      },
      partial: 1,
    }));
});

describe('header fields', () => {
  test('setHeader with string, number and array (Set-Cookie) values', () =>
    differential({
      request: get(),
      handler: ending((res) => {
        res.setHeader('Content-Type', 'text/plain; charset=utf-8');
        res.setHeader('X-Number', 42);
        res.setHeader('Set-Cookie', ['a=1; Path=/', 'b=2; HttpOnly']);
      }, BODY),
    }));

  test('array values: one-element array, repeated X- fields, Cookie arrays joined with "; "', () =>
    differential({
      request: get(),
      handler: ending((res) => {
        res.setHeader('X-One', ['only']);
        res.setHeader('X-Many', ['1', 2, 'three']);
        res.setHeader('Cookie', ['c=1', 'd=2']);
      }, BODY),
    }));

  test('mixed-case names keep their case; setHeader twice keeps the last', () =>
    differential({
      request: get(),
      handler: ending((res) => {
        res.setHeader('x-lower', 'a');
        res.setHeader('X-UPPER', 'b');
        res.setHeader('X-MiXeD-CaSe', 'c');
        res.setHeader('x-mixed-case', 'd');
        res.setHeader('CONTENT-TYPE', 'text/html');
      }, BODY),
    }));

  test('Content-Length given twice in an array value', () =>
    differential({ request: get(), handler: ending((res) => res.setHeader('Content-Length', ['11', '11']), BODY) }));

  test('appendHeader builds an array value', () =>
    differential({
      request: get(),
      handler: ending((res) => {
        res.appendHeader('X-Appended', 'a');
        res.appendHeader('X-Appended', 'b');
      }, BODY),
    }));

  test('a header value with latin1 bytes 0x80-0xFF and a utf8 string body: Node UTF-8 encodes the head', () =>
    differential({
      request: get(),
      handler: ending((res) => res.setHeader('X-Latin1', 'caf\u00e9 \u0080\u00ff'), MULTIBYTE),
    }));

  test('a header value with latin1 bytes 0x80-0xFF and a Buffer body: the head goes out as latin1', () =>
    differential({
      request: get(),
      handler: ending((res) => res.setHeader('X-Latin1', 'caf\u00e9 \u0080\u00ff'), Buffer.from(BODY)),
    }));

  test('a header value with latin1 bytes and a latin1 string body', () =>
    differential({
      request: get(),
      handler: ending((res) => res.setHeader('X-Latin1', 'caf\u00e9'), 'cr\u00e8me', 'latin1'),
    }));

  // end(data) sends a Content-Disposition value through
  // Buffer.from(value, 'latin1') (nodejs/node#46528): a number throws there,
  // and array elements become Buffers in the header map.
  test('Content-Disposition set to a number: Node\'s ERR_INVALID_ARG_TYPE, nothing written', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.setHeader('Content-Disposition', 123);
        ctx.attempt('end', () => ctx.api.end(res, BODY));
        ctx.record('bytesWritten after the throw', req.socket.bytesWritten);
        res.destroy();
      },
      allowEmpty: true,
      ...byHeadRenderer({ addon: { fast: 0, fallback: { 'field-content-disposition': 1 } }, node: { fast: 0, fallback: {} } }),
    }).then(({ fast }) => {
      assert.equal(fast.rec.calls.find((c) => c.threw).threw.code, 'ERR_INVALID_ARG_TYPE');
    }));

  test('Content-Disposition as an array: Node turns the elements into Buffers, equal state', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.setHeader('Content-Disposition', ['inline', 'attachment']);
        ctx.api.end(res, BODY);
        ctx.record('elements are Buffers', res.getHeader('Content-Disposition').map((v) => Buffer.isBuffer(v)));
      },
      ...headRuleFallback('field-content-disposition'),
    }));

  test('Content-Disposition with non-ASCII bytes: falls back (Node re-encodes it), equal bytes', () =>
    differential({
      request: get(),
      handler: ending((res) => res.setHeader('Content-Disposition', 'attachment; filename="\u00e9t\u00e9.txt"'), BODY),
      ...headRuleFallback('field-content-disposition'),
    }));

  test('writeHead with an object including Content-Length', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(MULTIBYTE) });
        ctx.api.end(res, MULTIBYTE);
      },
    }));

  test('writeHead with a reason phrase and an object', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(418, 'Short And Stout', { 'Content-Length': BODY.length });
        ctx.api.end(res, BODY);
      },
    }));

  test('writeHead with a flat array including Content-Length', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200, ['Content-Type', 'text/plain', 'X-Dup', 'a', 'X-Dup', 'b', 'Content-Length', String(BODY.length)]);
        ctx.api.end(res, BODY);
      },
    }));

  test('writeHead with a flat array without Content-Length: chunked head, the body as one chunk and the last chunk', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200, ['Content-Type', 'text/plain']);
        ctx.api.end(res, MULTIBYTE);
      },
    }));

  test('writeHead with an object without Content-Length: chunked, Buffer body', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(201, { 'X-A': 'b' });
        ctx.api.end(res, Buffer.from(BODY), ctx.callback());
      },
    }));

  test('writeHead without Content-Length, hex-encoded body: chunk size in bytes', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200);
        ctx.api.end(res, 'deadbeef00ff', 'hex');
      },
    }));

  test('writeHead without Content-Length, a latin1 field value and a utf8 body: the chunked head goes out as latin1', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'X-Latin1': 'caf\u00e9 \u00ff' });
        ctx.api.end(res, MULTIBYTE);
      },
    }));

  test('writeHead with Transfer-Encoding: gzip (not chunked) and no Content-Length: raw body', () =>
    differential({
      request: get(),
      expect: { untilClose: true },
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'Transfer-Encoding': 'gzip', Connection: 'close' });
        ctx.api.end(res, BODY);
      },
    }));

  test('writeHead without Content-Length and an empty Buffer: Node writes no empty chunk, fallback', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200);
        ctx.api.end(res, Buffer.alloc(0));
      },
      fast: 0,
      fallback: { 'empty-body': 1 },
    }));

  test('writeHead without Content-Length with trailers: falls back, equal bytes', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.writeHead(200, { Trailer: 'X-Sum' });
        res.addTrailers({ 'X-Sum': '42' });
        ctx.api.end(res, BODY);
      },
      fast: 0,
      fallback: { chunked: 1 },
    }));

  test('writeHead without Content-Length, 8 MiB body, client reads late: chunked partial write, exact bytes', () =>
    differential({
      request: get(),
      pauseClientUntil: 'ended',
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
        ctx.api.end(res, Buffer.alloc(8 * 1024 * 1024, 'c'), ctx.callback());
        ctx.signal('ended').resolve();
      },
      partial: 1,
    }));

  test('writeHead without Content-Length on an HTTP/1.0 request: close-delimited, no chunking', () =>
    differential({
      request: get('/', '', 'GET', '1.0'),
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'X-A': 'b' });
        ctx.api.end(res, BODY);
      },
    }));

  test('writeHead on HEAD without Content-Length: no body, fast', () =>
    differential({
      request: get('/', '', 'HEAD'),
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'X-A': 'b' });
        ctx.api.end(res, BODY);
      },
    }));

  test('writeHead after setHeader merges both', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.setHeader('X-From-Set', '1');
        res.setHeader('X-Overridden', 'old');
        res.writeHead(200, { 'X-Overridden': 'new', 'Content-Length': BODY.length });
        ctx.api.end(res, BODY);
      },
    }));

  test('writeHead with a flat array after setHeader merges both', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.setHeader('Set-Cookie', 'a=1');
        res.writeHead(200, ['Set-Cookie', 'b=2', 'Content-Length', String(BODY.length)]);
        ctx.api.end(res, BODY);
      },
    }));

  test('sendDate = false: no Date field', () =>
    differential({ request: get(), handler: ending((res) => { res.sendDate = false; }, BODY) }));

  test('removeHeader("Date"): no Date field', () =>
    differential({ request: get(), handler: ending((res) => res.removeHeader('Date'), BODY) }));

  test('user Date field replaces the automatic one', () =>
    differential({ request: get(), handler: ending((res) => res.setHeader('Date', 'Sun, 06 Nov 1994 08:49:37 GMT'), BODY) }));

  test('user Content-Length equal to the body length', () =>
    differential({ request: get(), handler: ending((res) => res.setHeader('Content-Length', Buffer.byteLength(MULTIBYTE)), MULTIBYTE) }));

  test('user Content-Length given as a string', () =>
    differential({ request: get(), handler: ending((res) => res.setHeader('content-length', String(BODY.length)), BODY) }));

  test('user Content-Length different from the body: Node sends the whole body anyway', () =>
    differential({
      request: get('/', 'Connection: close\r\n'),
      expect: { untilClose: true },
      handler: ending((res) => res.setHeader('Content-Length', 3), BODY),
    }));

  test('removeHeader("Content-Length"): Node frames the body chunked, fallback, equal bytes', () =>
    differential({
      request: get(),
      handler: ending((res) => res.removeHeader('Content-Length'), BODY),
      ...headRuleFallback('chunked-body'),
    }));

  test('removeHeader of Content-Length and Transfer-Encoding: close-delimited body', () =>
    differential({
      request: get(),
      expect: { untilClose: true },
      handler: ending((res) => {
        res.removeHeader('Content-Length');
        res.removeHeader('Transfer-Encoding');
      }, BODY),
    }));

  test('server uniqueHeaders with an array value: falls back, equal bytes', () =>
    differential({
      request: get(),
      serverOptions: { uniqueHeaders: ['x-unique'] },
      handler: ending((res) => res.setHeader('X-Unique', ['a', 'b']), BODY),
      ...headRuleFallback('unique-headers'),
    }));
});

describe('callback, return value and events', () => {
  // Node 20 calls it after the 'finish' listeners, Node 26 right before
  // them; either way once, with the response finished, after end() returned.
  test('callback as the second argument: called once, at finish', () =>
    differential({ request: get(), handler: (req, res, ctx) => ctx.api.end(res, BODY, ctx.callback()) })
      .then(({ fast }) => {
        const events = fast.rec.events.map((e) => (typeof e === 'string' ? e : e.at));
        assert.equal(events.filter((e) => e === 'res0:callback').length, 1, events.join());
        assert.ok(events.indexOf('res0:callback') > events.indexOf('res0:end:returned'), events.join());
        assert.equal(fast.rec.events.find((e) => e.at === 'res0:callback').writableFinished, true);
      }));

  test('callback as the third argument with an encoding', () =>
    differential({ request: get(), handler: (req, res, ctx) => ctx.api.end(res, BODY, 'latin1', ctx.callback()) }));

  test('callback on a HEAD response', () =>
    differential({ request: get('/', '', 'HEAD'), handler: (req, res, ctx) => ctx.api.end(res, BODY, ctx.callback()) }));

  test('callback on a connection that closes afterwards', () =>
    differential({ request: get('/', 'Connection: close\r\n'), handler: (req, res, ctx) => ctx.api.end(res, BODY, ctx.callback()) }));

  test('finish listener added after end() still fires; writableFinished is false right after end()', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        ctx.api.end(res, BODY);
        ctx.record('writableFinished after end', res.writableFinished);
        ctx.record('writableEnded after end', res.writableEnded);
        res.on('finish', () => ctx.record('late finish listener', res.writableFinished));
      },
    }));

  test('socket.bytesWritten counts the bytes of several fast responses on one connection', () =>
    differential({
      request: get('/1') + get('/2') + get('/3'),
      handler: (req, res, ctx) => setImmediate(() => {
        ctx.api.end(res, req.url.repeat(100));
        res.on('finish', () => ctx.record('bytesWritten', req.socket.bytesWritten));
      }),
    }));
});

describe('a client that went away', () => {
  // The handler resets the client's end of the connection first (loopback:
  // the RST is there at once), so the response's write fails. The socket
  // reports ECONNRESET once; the fast path must still report it (not the
  // EPIPE of a second write), with Node's events and bytesWritten.
  for (const [name, body] of [
    ['small body', 'hello'],
    ['300 kB body', Buffer.alloc(300 * 1024, 'r')],
    ['8 MiB body', Buffer.alloc(8 * 1024 * 1024, 'r')],
  ]) {
    test(`client reset before end (${name}): same error, events and state as Node`, () =>
      differential({
        request: get(),
        allowEmpty: true,
        handler: (req, res, ctx) => {
          ctx.clientSocket().resetAndDestroy();
          ctx.api.end(res, body, ctx.callback());
        },
        partial: 1,
      }).then(({ fast }) => {
        assert.ok(fast.rec.events.includes('socket0:error:ECONNRESET'), JSON.stringify(fast.rec.events));
      }));
  }

  // What socket.bytesWritten counts of the failed write (read at 'close'):
  // Node's own write adds nothing for one string that fits 16 KiB of stack
  // storage (the head joined to a UTF-8 or 'latin1' string on Node 24+, the
  // head alone without a body on every version), the bytes otherwise.
  for (const [name, args, method] of [
    ['HEAD request', ['hello'], 'HEAD'],
    ['string in latin1', ['h\u00e9llo', 'latin1']],
    ['string in binary', ['h\u00e9llo', 'binary']],
    ['string in utf-8 spelled so', ['h\u00e9llo', 'utf-8']],
    ['5,400-unit string: 16 KiB of UTF-8 storage with the head', ['s'.repeat(5400)]],
    ['1,000-unit string beyond ASCII (Node 24+: given to the addon encoded)', ['na\u00efve '.repeat(200).slice(0, 1000)]],
    ['6,000-unit string beyond ASCII: past 16 KiB of UTF-8 storage', ['na\u00efve '.repeat(1000)]],
    ['16,000-unit string in latin1', ['s'.repeat(16000), 'latin1']],
    ['a Buffer', [Buffer.from('hello')]],
  ]) {
    test(`client reset before end (${name}): the bytes the failed write counts, as Node's`, () =>
      differential({
        request: get('/', '', method),
        allowEmpty: true,
        handler: (req, res, ctx) => {
          ctx.clientSocket().resetAndDestroy();
          ctx.api.end(res, ...args, ctx.callback());
        },
        partial: 1,
      }));
  }

  test('client reset before a chunked end (writeHead without Content-Length)', () =>
    differential({
      request: get(),
      allowEmpty: true,
      handler: (req, res, ctx) => {
        res.writeHead(200, { 'X-A': 'b' });
        ctx.clientSocket().resetAndDestroy();
        ctx.api.end(res, BODY, ctx.callback());
      },
      partial: 1,
    }));

  test('client closed (FIN) before end: the write succeeds, the reset comes after', () =>
    differential({
      request: get(),
      allowEmpty: true,
      handler: (req, res, ctx) => {
        ctx.clientSocket().destroy();
        ctx.api.end(res, BODY, ctx.callback());
      },
    }));
});

describe('errors', () => {
  // After the throw, the handler ends the response normally: the client must
  // then see exactly one response (nothing written before the throw).
  function throwsThenEnds(bad) {
    return (req, res, ctx) => {
      const err = ctx.attempt('bad end', () => ctx.rawApi.end(res, ...bad));
      ctx.record('threw', err !== null);
      ctx.record('bytesWritten before the good end', req.socket.bytesWritten);
      ctx.record('headersSent after the throw', res.headersSent);
      res.end('after the error');
    };
  }

  async function exactlyOneResponse(run) {
    const { node, fast } = await run;
    for (const r of [node, fast]) {
      const text = r.bytes.toString('latin1');
      assert.ok(text.startsWith('HTTP/1.1 200 OK\r\n'), text);
      assert.equal(text.split('HTTP/1.1 ').length, 2, text);
      assert.ok(text.endsWith('after the error'), text);
    }
  }

  for (const [name, bad, code] of [
    ['a number body', [42], 'ERR_INVALID_ARG_TYPE'],
    ['an object body', [{ a: 1 }], 'ERR_INVALID_ARG_TYPE'],
    ['true as body', [true], 'ERR_INVALID_ARG_TYPE'],
    ['an array body', [[1, 2]], 'ERR_INVALID_ARG_TYPE'],
  ]) {
    test(`${name}: ${code} thrown, nothing written`, async () => {
      const run = differential({
        request: get(),
        handler: throwsThenEnds(bad),
        fast: 0,
        fallback: { 'body-type': 1 },
      });
      const { node } = await run;
      assert.equal(node.rec.calls[0].threw.code, code);
      await exactlyOneResponse(run);
    });
  }

  test('null body: ends the response without a body, as res.end(null)', () =>
    differential({ request: get(), handler: ending(null, null), fast: 0, fallback: { 'no-body': 1 } }));

  test('invalid status code 99: ERR_HTTP_INVALID_STATUS_CODE thrown, nothing written', async () => {
    const run = differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.statusCode = 99;
        ctx.attempt('bad end', () => ctx.rawApi.end(res, BODY));
        ctx.record('bytesWritten', req.socket.bytesWritten);
        res.statusCode = 200;
        res.end('after the error');
      },
      ...refusedHead('invalid'),
    });
    const { node } = await run;
    assert.equal(node.rec.calls[0].threw.code, 'ERR_HTTP_INVALID_STATUS_CODE');
    await exactlyOneResponse(run);
  });

  test('statusMessage with a character above U+00FF: ERR_INVALID_CHAR thrown, nothing written', async () => {
    const run = differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.statusMessage = 'bad \u0100';
        ctx.attempt('bad end', () => ctx.rawApi.end(res, BODY));
        ctx.record('bytesWritten', req.socket.bytesWritten);
        res.statusMessage = 'OK';
        res.end('after the error');
      },
      ...refusedHead('invalid'),
    });
    const { node } = await run;
    assert.equal(node.rec.calls[0].threw.code, 'ERR_INVALID_CHAR');
    await exactlyOneResponse(run);
  });

  test('statusMessage with CR LF: ERR_INVALID_CHAR thrown, nothing written', async () => {
    const run = differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.statusMessage = 'OK\r\nX-Injected: 1';
        ctx.attempt('bad end', () => ctx.rawApi.end(res, BODY));
        res.statusMessage = 'OK';
        res.end('after the error');
      },
      ...refusedHead('invalid'),
    });
    const { node } = await run;
    assert.equal(node.rec.calls[0].threw.code, 'ERR_INVALID_CHAR');
    await exactlyOneResponse(run);
  });

  test('ending twice: ERR_STREAM_WRITE_AFTER_END to the callback and as an error event', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        ctx.api.end(res, BODY, ctx.callback('first callback'));
        ctx.api.end(res, 'again', ctx.callback('second callback'));
      },
      fast: 1,
      fallback: { finished: 1 },
    }).then(({ node }) => {
      const second = node.rec.events.find((e) => e.at === 'res0:second callback');
      assert.equal(second.args[0].code, 'ERR_STREAM_WRITE_AFTER_END');
      assert.ok(node.rec.events.some((e) => e.at === 'res0:error' && e.error.code === 'ERR_STREAM_WRITE_AFTER_END'));
    }));

  test('ending twice after finish (response already closed)', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        ctx.api.end(res, BODY);
        res.on('close', () => ctx.api.end(res, 'again', ctx.callback('late callback')));
      },
      fast: 1,
      fallback: { finished: 1 },
    }));

  test('fastEnd after res.end() with no data', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.end();
        ctx.api.end(res, 'again', ctx.callback('second callback'));
      },
      fast: 0,
      fallback: { finished: 1 },
    }));

  test('strictContentLength with a matching Content-Length: falls back, equal result', () =>
    differential({
      request: get(),
      handler: ending((res) => {
        res.strictContentLength = true;
        res.setHeader('Content-Length', BODY.length);
      }, BODY),
      fast: 0,
      fallback: { 'strict-content-length': 1 },
    }));

  test('strictContentLength with a mismatching Content-Length: ERR_HTTP_CONTENT_LENGTH_MISMATCH, equal result', () =>
    differential({
      request: get('/', 'Connection: close\r\n'),
      expect: { untilClose: true },
      allowEmpty: true,
      handler: (req, res, ctx) => {
        res.strictContentLength = true;
        res.setHeader('Content-Length', 3);
        ctx.attempt('bad end', () => ctx.rawApi.end(res, BODY));
        res.destroy();
      },
      fast: 0,
      fallback: { 'strict-content-length': 1 },
    }).then(({ node }) => {
      assert.equal(node.rec.calls[0].threw.code, 'ERR_HTTP_CONTENT_LENGTH_MISMATCH');
    }));
});

describe('fallbacks', () => {
  test('user res.cork(): socket-busy, equal bytes', () =>
    differential({
      request: get(),
      handler: ending((res) => res.cork(), BODY),
      fast: 0,
      fallback: { 'socket-busy': 1 },
    }));

  test('res.write() before end: chunked body, head already sent, equal bytes', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.write('first part, ');
        ctx.api.end(res, 'last part');
      },
      // Node 20 sends the head at once; Node 24 and later collect the chunk
      // with the response corked for the tick, and the package's end()
      // writes it with end()'s data (lib/chunked-buffer.js endCollected()).
      ...(FRAMES_CHUNK ? { fast: 1, fallback: {} } : { fast: 0, fallback: [{ 'head-sent': 1 }, { 'socket-busy': 1 }] }),
    }));

  test('flushHeaders() before end: head already sent, equal bytes', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.setHeader('Content-Length', BODY.length);
        res.flushHeaders();
        ctx.api.end(res, BODY);
      },
      fast: 0,
      fallback: { 'head-sent': 1 },
    }));

  test('user Transfer-Encoding: chunked: falls back, equal bytes', () =>
    differential({
      request: get(),
      handler: ending((res) => res.setHeader('Transfer-Encoding', 'chunked'), BODY),
      ...headRuleFallback('field-transfer-encoding'),
    }));

  test('addTrailers with a Trailer field: falls back, equal bytes', () =>
    differential({
      request: get(),
      handler: ending((res) => {
        res.setHeader('Trailer', 'X-Checksum');
        res.addTrailers({ 'X-Checksum': 'abc123' });
      }, BODY),
      // Where Node renders every head, it renders this chunked one; the
      // trailers keep the body Node's (counted as 'chunked' by end()).
      ...byHeadRenderer({
        addon: { fast: 0, fallback: { 'field-trailer': 1 } },
        node: { fast: 0, fallback: { 'chunked': 1 } },
      }),
    }));

  test('TLS (https server): falls back, equal bytes', () =>
    differential({
      transport: 'tls',
      request: get(),
      handler: ending((res) => res.setHeader('X-A', 'b'), BODY),
      fast: 0,
      fallback: { tls: 1 },
    }));

  test('a socket without a file descriptor (Duplex passed to server.emit("connection")): falls back, equal bytes', () =>
    differential({
      transport: 'duplex',
      request: get(),
      handler: ending((res) => res.setHeader('X-A', 'b'), BODY),
      fast: 0,
      fallback: { 'no-fd': 1 },
    }));

  test('a response whose end() was replaced on the instance: delegates to it', () =>
    differential({
      request: get(),
      handler: (req, res, ctx) => {
        const original = res.end;
        res.end = function wrappedEnd(...args) {
          ctx.record('wrapped end called with', args.length);
          return original.apply(this, args);
        };
        ctx.api.end(res, BODY);
      },
      fast: 0,
      fallback: { 'end-replaced': 1 },
    }));
});

describe('HTTP/2 compatibility API', () => {
  async function h2Exchange(handler) {
    const sessions = new Set();
    const server = http2.createServer(handler);
    server.on('session', (session) => sessions.add(session));
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = http2.connect(`http://127.0.0.1:${server.address().port}`);
    try {
      return await withTimeout(new Promise((resolve, reject) => {
        client.on('error', reject);
        const req = client.request({ ':path': '/' });
        const chunks = [];
        let headers;
        req.on('response', (h) => { headers = h; });
        req.on('data', (c) => chunks.push(c));
        req.on('end', () => resolve({ headers, body: Buffer.concat(chunks) }));
        req.on('error', reject);
        req.end();
      }), TIMEOUT_MS, 'http2 response');
    } finally {
      // Never wait for a stream that a failure left open.
      client.destroy();
      for (const session of sessions) session.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  test('fastResponse.end on an Http2ServerResponse behaves as its own end()', async () => {
    const handler = (endWith) => (req, res) => {
      res.statusCode = 201;
      res.setHeader('X-A', 'b');
      endWith(res, MULTIBYTE);
    };
    const before = fastResponse.stats();
    const viaNode = await h2Exchange(handler((res, body) => res.end(body)));
    const viaFast = await h2Exchange(handler((res, body) => fastResponse.end(res, body)));
    const after = fastResponse.stats();
    const strip = (headers) => {
      const copy = { ...headers };
      delete copy.date;
      return copy;
    };
    assert.deepEqual(strip(viaFast.headers), strip(viaNode.headers));
    assert.equal(viaFast.headers[':status'], 201);
    assert.equal(viaFast.body.toString(), MULTIBYTE);
    assert.deepEqual(viaFast.body, viaNode.body);
    assert.equal(after.fast, before.fast);
    assert.equal((after.reasons['not-http1'] || 0) - (before.reasons['not-http1'] || 0), 1);
  });
});

describe('harness self-checks', () => {
  test('the response parser splits pipelined responses and knows HEAD has no body', () => {
    const text = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi' +
      'HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n' +
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n';
    const methods = requestMethods(get('/a') + get('/b', '', 'HEAD') + get('/c'));
    assert.deepEqual(methods, ['GET', 'HEAD', 'GET']);
    assert.equal(parseResponses(Buffer.from(text, 'latin1'), methods).responses.length, 3);
  });

  test('lib/node-internals.js lets Node render every head exactly where Node\'s head rules are not src/head.cc\'s', () => {
    assert.equal(require('../lib/node-internals').NODE_RENDERS_HEAD, nodeRules.NODE_RENDERS_HEAD);
  });

  test('a sanity check of the fast bytes themselves', async () => {
    const { fast } = await differential({ request: get(), handler: ending((res) => { res.sendDate = false; }, 'hi') });
    assert.equal(fast.bytes.toString('latin1'),
                 'HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n' +
                 'Content-Length: 2\r\n\r\nhi');
  });
});

describe('the harness can fail', () => {
  test('a difference in the bytes between the two runs fails the comparison', async () => {
    await assert.rejects(differential({
      request: get(),
      handler: (req, res, ctx) => {
        if (ctx.label === 'fast') res.setHeader('X-Only-In-Fast-Run', '1');
        ctx.api.end(res, BODY);
      },
    }), /bytes on the wire/);
  });

  test('a difference in the events fails the comparison', async () => {
    await assert.rejects(differential({
      request: get(),
      handler: (req, res, ctx) => {
        ctx.api.end(res, BODY, ctx.label === 'fast' ? ctx.callback() : undefined);
      },
    }), /events/);
  });

  test('a fast run that silently fell back fails the comparison', async () => {
    await assert.rejects(differential({
      request: get(),
      handler: ending((res) => res.cork(), BODY),
    }), /fast path/);
  });
});
