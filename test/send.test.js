'use strict';

// send(), template() and json() against their definition:
//   send(res, s, h, d)        ≡ res.writeHead(s, withContentLength(res, s, h, d)); res.end(d)
//   template(s, h).send(res, d) ≡ send(res, s, h, d)   (h as it was at creation)
//   json(res, s, v, h)        ≡ send(res, s, { 'Content-Type': JSON, ...h }, JSON.stringify(v))
// Every case is differential; errors must be Node's own (class, code,
// message) with nothing written before the throw.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const http2 = require('node:http2');

const fastResponse = require('..');
const { differential, get, referenceSend, withTimeout } = require('./helpers/differential');
const { WRITEHEAD_RERENDERS, byHeadRenderer, sendNodePath } = require('./helpers/node-rules');
const { ENCODED_MIN_UNITS } = require('../lib/body');

const BODY = 'h\u00e9llo w\u00f6rld \u2713';
const BYTES = Buffer.from([0, 1, 2, 0x80, 0xff, 10, 13]);

// The three entry points, each as a function of (ctx, res, statusCode, headers, data).
const entryPoints = {
  send: (ctx, res, s, h, d) => ctx.api.send(res, s, h, d),
  template: (ctx, res, s, h, d) => ctx.api.template(s, h).send(res, d),
};

function sending(entry, statusCode, headers, data, setup) {
  return (req, res, ctx) => {
    if (setup) setup(res, req);
    entryPoints[entry](ctx, res, statusCode, headers, data);
  };
}

for (const entry of Object.keys(entryPoints)) {
  describe(`${entry}(): differential against writeHead(withContentLength(...)) + end()`, () => {
    test('object headers, utf8 string body', () =>
      differential({ request: get(), handler: sending(entry, 200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Number': 7 }, BODY) }));

    test('a utf8 string body beyond ASCII of ENCODED_MIN_UNITS units and more (Node 24+: given to the addon encoded), GET and HEAD', async () => {
      const long = 'na\u00efve \u4e2d\u{1F600} '.repeat(ENCODED_MIN_UNITS / 4);
      await differential({ request: get(), handler: sending(entry, 200, { 'X-Latin1': 'caf\u00e9' }, long) });
      await differential({ request: get('/', '', 'HEAD'), handler: sending(entry, 200, { 'X-Latin1': 'caf\u00e9' }, long) });
    });

    test('flat array headers with duplicates', () =>
      differential({ request: get(), handler: sending(entry, 200, ['Content-Type', 'text/plain', 'X-Dup', 'a', 'X-Dup', 'b'], BODY) }));

    test('array of [name, value] pairs', () =>
      differential({ request: get(), handler: sending(entry, 200, [['Content-Type', 'text/plain'], ['X-Pair', 'v']], BODY) }));

    test('array values: Set-Cookie list, repeated field, Cookie joined', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'Set-Cookie': ['a=1; Path=/', 'b=2'], 'X-Many': [1, 'two'], Cookie: ['c=1', 'd=2'] }, BODY),
      }));

    test('values that are not strings: null, true, 0, empty string, empty array, object', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'X-Null': null, 'X-True': true, 'X-Zero': 0, 'X-Empty': '', 'X-None': [], 'X-Obj': {} }, BODY),
        // An object value: Node validates String(value) and renders
        // '' + value, so Node renders the head ('invalid'); the body still
        // goes out through the addon.
        ...byHeadRenderer({ addon: { fast: 1, fallback: { invalid: 1 } }, node: { fast: 1, fallback: {} } }),
      }));

    test('Buffer body', () =>
      differential({ request: get(), handler: sending(entry, 200, { 'Content-Type': 'application/octet-stream' }, BYTES) }));

    test('Uint8Array body', () =>
      differential({ request: get(), handler: sending(entry, 200, {}, new Uint8Array([65, 66, 67])) }));

    // The head alone goes out fast. Where Node renders every head, send()
    // is writeHead() + end(): Node's end() without a body for '' and
    // undefined (counted nowhere), fastResponse.end()'s 'empty-body'
    // fallback for an empty Buffer.
    test('empty string body: Content-Length: 0', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'X-A': 'b' }, ''),
        ...byHeadRenderer({ addon: { fast: 1, fallback: {} }, node: { fast: 0, fallback: {} } }),
      }));

    test('undefined body: Content-Length: 0', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'X-A': 'b' }, undefined),
        ...byHeadRenderer({ addon: { fast: 1, fallback: {} }, node: { fast: 0, fallback: {} } }),
      }));

    test('empty Buffer body', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'X-A': 'b' }, Buffer.alloc(0)),
        ...byHeadRenderer({
          addon: { fast: 1, fallback: {} },
          node: { fast: 0, fallback: { 'empty-body': 1 } },
        }),
      }));

    test('no headers (undefined) and null headers', async () => {
      await differential({ request: get(), handler: sending(entry, 200, undefined, BODY) });
      await differential({ request: get(), handler: sending(entry, 200, null, BODY) });
    });

    test('HEAD: no body and no Content-Length added', () =>
      differential({ request: get('/', '', 'HEAD'), handler: sending(entry, 200, { 'X-A': 'b' }, BODY) }));

    for (const status of [201, 204, 304, 404, 500]) {
      test(`status ${status}`, () =>
        differential({ request: get(), handler: sending(entry, status, { 'X-A': 'b' }, BODY) }));
    }

    test('keep-alive request', () =>
      differential({ request: get('/', 'Connection: keep-alive\r\n'), handler: sending(entry, 200, {}, BODY) }));

    test('Connection: close request', () =>
      differential({ request: get('/', 'Connection: close\r\n'), handler: sending(entry, 200, {}, BODY) }));

    test('HTTP/1.0 request (Content-Length given, connection closes)', () =>
      differential({ request: get('/', '', 'GET', '1.0'), handler: sending(entry, 200, {}, BODY) }));

    test('HTTP/1.0 request with Connection: keep-alive stays open (Content-Length known)', () =>
      differential({ request: get('/', 'Connection: keep-alive\r\n', 'GET', '1.0'), handler: sending(entry, 200, {}, BODY) }));

    test('user Content-Length equal to the body', () =>
      differential({ request: get(), handler: sending(entry, 200, { 'content-length': Buffer.byteLength(BODY) }, BODY) }));

    test('user Content-Length different from the body', () =>
      differential({
        request: get('/', 'Connection: close\r\n'),
        expect: { untilClose: true },
        handler: sending(entry, 200, { 'Content-Length': 2 }, BODY),
      }));

    // `_contentLength` is `+value` of the last Content-Length field: the
    // addon reports plain decimal digits itself, anything else is computed
    // in JavaScript (lib/write.js contentLengthOf()).
    test('user Content-Length with leading whitespace and zeros: _contentLength is +value', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'Content-Length': ` 0${Buffer.byteLength(BODY)}` }, BODY),
      }));

    test('two Content-Length fields from an array value: _contentLength is the last one', () =>
      differential({
        request: get('/', 'Connection: close\r\n'),
        expect: { untilClose: true },
        handler: sending(entry, 200, { 'Content-Length': [String(Buffer.byteLength(BODY)), '3'] }, BODY),
      }));

    test('user Date field', () =>
      differential({ request: get(), handler: sending(entry, 200, { Date: 'Sun, 06 Nov 1994 08:49:37 GMT' }, BODY) }));

    test('user Connection: close field', () =>
      differential({ request: get(), handler: sending(entry, 200, { Connection: 'close' }, BODY) }));

    test('user Connection: keep-alive field', () =>
      differential({ request: get(), handler: sending(entry, 200, { Connection: 'keep-alive' }, BODY) }));

    test('user Keep-Alive field', () =>
      differential({ request: get(), handler: sending(entry, 200, { 'Keep-Alive': 'timeout=9' }, BODY) }));

    test('latin1 header value with a string body: the head goes out UTF-8 encoded', () =>
      differential({ request: get(), handler: sending(entry, 200, { 'X-Latin1': 'caf\u00e9 \u00ff' }, BODY) }));

    test('latin1 header value with a Buffer body: the head goes out as latin1', () =>
      differential({ request: get(), handler: sending(entry, 200, { 'X-Latin1': 'caf\u00e9 \u00ff' }, BYTES) }));

    test('sendDate = false', () =>
      differential({ request: get(), handler: sending(entry, 200, {}, BODY, (res) => { res.sendDate = false; }) }));

    test('server.keepAliveTimeout = 2500', () =>
      differential({
        request: get(),
        setup: (server) => { server.keepAliveTimeout = 2500; },
        handler: sending(entry, 200, {}, BODY),
      }));

    test('server.maxRequestsPerSocket = 3', () =>
      differential({
        request: get('/1') + get('/2'),
        setup: (server) => { server.maxRequestsPerSocket = 3; },
        handler: (req, res, ctx) => setImmediate(() => entryPoints[entry](ctx, res, 200, {}, req.url)),
      }));

    test('pipelined requests each sent when current', () =>
      differential({
        request: get('/a') + get('/b', '', 'HEAD') + get('/c'),
        handler: (req, res, ctx) => setImmediate(() => entryPoints[entry](ctx, res, 200, { 'X-Url': req.url }, req.url)),
      }));

    test('pipelined requests sent at once: the waiting ones fall back (not-current)', () =>
      differential({
        request: get('/a') + get('/b'),
        handler: (req, res, ctx) => entryPoints[entry](ctx, res, 200, {}, req.url),
        fast: 1,
        // Counted once, by send(); the end() it hands over to does not count again.
        fallback: { 'not-current': 1 },
      }));

    // Node's writeHead() renders the head; the body then still goes out
    // on the fast path (a rendered head with Content-Length).
    test('after setHeader: writeHead merges with the header map (Node\'s path)', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'X-B': '2' }, BODY, (res) => res.setHeader('X-A', '1')),
        ...sendNodePath('header-map', 1),
      }));

    test('after setHeader("Content-Length"): no second Content-Length added', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, {}, BODY, (res) => res.setHeader('Content-Length', Buffer.byteLength(BODY))),
        ...sendNodePath('header-map', 1),
      }));

    // An empty array renders no field line; writeHead() still checks its
    // name, and withContentLength() still sees a framing field by its name:
    // then the body goes out chunked, not with a Content-Length send() adds.
    test('an empty array value for Content-Length: no Content-Length added, Node\'s chunked framing', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'Content-Length': [] }, BODY),
        ...sendNodePath('invalid', 1),
      }));

    test('an empty array value with a valid name: no field, fast', () =>
      differential({ request: get(), handler: sending(entry, 200, { 'X-None': [], 'X-A': 'b' }, BODY) }));

    // writeHead() renders the head; the body then goes out as one chunk and
    // the last chunk on the fast path.
    test('Transfer-Encoding: chunked in the headers: Node\'s chunked framing', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'Transfer-Encoding': 'chunked' }, BODY),
        ...sendNodePath('field-transfer-encoding', 1),
      }));

    test('TLS: falls back, equal bytes', () =>
      differential({
        transport: 'tls',
        request: get(),
        handler: sending(entry, 200, { 'X-A': 'b' }, BODY),
        fast: 0,
        fallback: { tls: 1 },
      }));

    test('8 MiB Buffer body with a client that reads late: partial write, exact bytes', () => {
      const big = Buffer.alloc(8 * 1024 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 11)) & 0xff;
      return differential({
        request: get(),
        pauseClientUntil: 'sent',
        handler: (req, res, ctx) => {
          entryPoints[entry](ctx, res, 200, { 'Content-Type': 'application/octet-stream' }, big);
          ctx.signal('sent').resolve();
        },
        partial: 1,
      });
    });

    test('Transfer-Encoding: chunked with a latin1 field value and a string body: the head goes out as latin1', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, { 'Transfer-Encoding': 'chunked', 'X-Latin1': 'caf\u00e9' }, BODY),
        ...sendNodePath('field-transfer-encoding', 1),
      }));

    test('a reason phrase string in place of headers (writeHead(s, reason) semantics)', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, 'Custom Reason', BODY),
        ...sendNodePath('invalid', 1),
      }));

    test('client reset before the response: same error, events and state as Node', () =>
      differential({
        request: get(),
        allowEmpty: true,
        handler: (req, res, ctx) => {
          ctx.clientSocket().resetAndDestroy();
          entryPoints[entry](ctx, res, 200, { 'X-A': 'b' }, BODY);
        },
        partial: 1,
      }));

    test('a response whose end() was replaced on the instance (compression-style): the wrapper ends it', () =>
      differential({
        request: get(),
        handler: (req, res, ctx) => {
          const original = res.end;
          let calls = 0;
          res.end = function wrappedEnd(...args) {
            calls++;
            ctx.record('wrapped end arguments', args.length);
            return original.apply(this, args);
          };
          res.on('finish', () => ctx.record('wrapped end calls', calls));
          entryPoints[entry](ctx, res, 200, { 'X-A': 'b' }, BODY);
        },
        // The wrapper calls Node's own end(): nothing fast.
        ...sendNodePath('end-replaced', 0),
      }).then(({ fast }) => {
        assert.deepEqual(fast.rec.custom.map((c) => c.value), [1, 1]);
      }));

    test('an on-headers-style writeHead() wrapper on the instance is called once; the body still goes out fast', () =>
      differential({
        request: get(),
        handler: (req, res, ctx) => {
          const original = res.writeHead;
          let calls = 0;
          res.writeHead = function wrappedWriteHead(...args) {
            calls++;
            this.setHeader('X-Response-Time', '1ms');
            return original.apply(this, args);
          };
          res.on('finish', () => ctx.record('writeHead wrapper calls', calls));
          entryPoints[entry](ctx, res, 200, { 'X-A': 'b' }, BODY);
        },
        ...sendNodePath('writehead-replaced', 1),
      }).then(({ fast }) => {
        assert.deepEqual(fast.rec.custom.map((c) => c.value), [1]);
        assert.match(fast.bytes.toString('latin1'), /X-Response-Time: 1ms\r\n/);
      }));

    test('custom statusMessage set on the response before', () =>
      differential({
        request: get(),
        handler: sending(entry, 200, {}, BODY, (res) => { res.statusMessage = 'Fine'; }),
        ...(entry === 'template' ? sendNodePath('status-message', 1) : { fast: 1, fallback: {} }),
      }));
  });
}

describe('json(): differential against send() with Content-Type and JSON.stringify', () => {
  const value = { text: BODY, list: [1, 2.5, null, true], nested: { a: '\u{1F600}' } };

  test('no headers: Content-Type application/json; charset=utf-8', () =>
    differential({ request: get(), handler: (req, res, ctx) => ctx.api.json(res, 200, value) }));

  test('object headers: Content-Type first, then the given fields', () =>
    differential({ request: get(), handler: (req, res, ctx) => ctx.api.json(res, 201, value, { 'X-A': 'b' }) }));

  test('flat array headers', () =>
    differential({ request: get(), handler: (req, res, ctx) => ctx.api.json(res, 200, value, ['X-A', 'b']) }));

  test('a Content-Type of the caller is respected (any case)', async () => {
    await differential({ request: get(), handler: (req, res, ctx) => ctx.api.json(res, 200, value, { 'content-type': 'application/vnd.api+json' }) });
    await differential({ request: get(), handler: (req, res, ctx) => ctx.api.json(res, 200, value, ['CONTENT-TYPE', 'text/json']) });
  });

  test('scalar values: string, number, null, array', async () => {
    for (const v of ['a "quoted" string', 42, null, [1, 'x']]) {
      await differential({ request: get(), handler: (req, res, ctx) => ctx.api.json(res, 200, v) });
    }
  });

  test('HEAD and 204', async () => {
    await differential({ request: get('/', '', 'HEAD'), handler: (req, res, ctx) => ctx.api.json(res, 200, value) });
    await differential({ request: get(), handler: (req, res, ctx) => ctx.api.json(res, 204, value) });
  });

  test('the bytes are the JSON text (sanity check)', async () => {
    const { fast } = await differential({
      request: get(),
      handler: (req, res, ctx) => {
        res.sendDate = false;
        ctx.api.json(res, 200, { a: 1 });
      },
    });
    assert.equal(fast.bytes.toString(),
                 'HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n' +
                 'Content-Length: 7\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n{"a":1}');
  });

  for (const [name, bad] of [['undefined', undefined], ['a function', () => 1], ['a symbol', Symbol('s')]]) {
    test(`a value without JSON text (${name}): TypeError ERR_INVALID_ARG_VALUE, nothing written`, async () => {
      const { fast } = await differential({
        request: get(),
        handler: (req, res, ctx) => {
          ctx.attempt('json', () => ctx.api.json(res, 200, bad));
          ctx.record('bytesWritten', req.socket.bytesWritten);
          res.end('after the error');
        },
        fast: 0,
      });
      const threw = fast.rec.calls[0].threw;
      assert.equal(threw.class, 'TypeError');
      assert.equal(threw.code, 'ERR_INVALID_ARG_VALUE');
      assert.equal(fast.rec.custom[0].value, 0);
      assertOneResponse(fast.bytes);
    });
  }

  test('a BigInt: JSON.stringify\'s own TypeError, nothing written', async () => {
    const { fast } = await differential({
      request: get(),
      handler: (req, res, ctx) => {
        ctx.attempt('json', () => ctx.api.json(res, 200, { n: 1n }));
        res.end('after the error');
      },
      fast: 0,
    });
    assert.equal(fast.rec.calls[0].threw.class, 'TypeError');
    assertOneResponse(fast.bytes);
  });
});

// ---------------------------------------------------------------------------
// Errors

function assertOneResponse(bytes) {
  const text = bytes.toString('latin1');
  assert.ok(text.startsWith('HTTP/1.1 '), `the first bytes are the good response's: ${JSON.stringify(text)}`);
  assert.equal(text.split('HTTP/1.1 ').length, 2, `exactly one response: ${JSON.stringify(text)}`);
  assert.ok(text.endsWith('after the error'), text);
}

const badInputs = [
  ['status 99', 'ERR_HTTP_INVALID_STATUS_CODE', 99, {}],
  ['status 1000', 'ERR_HTTP_INVALID_STATUS_CODE', 1000, {}],
  ['status "abc"', 'ERR_HTTP_INVALID_STATUS_CODE', 'abc', {}],
  ['a header name with a space', 'ERR_INVALID_HTTP_TOKEN', 200, { 'X Bad': '1' }],
  ['a non-ASCII header name', 'ERR_INVALID_HTTP_TOKEN', 200, { 'X-\u00dcml': '1' }],
  ['an empty header name', 'ERR_INVALID_HTTP_TOKEN', 200, { '': '1' }],
  ['an empty header name in a flat array', 'ERR_INVALID_HTTP_TOKEN', 200, ['', '1']],
  ['a header name with a colon in a flat array', 'ERR_INVALID_HTTP_TOKEN', 200, ['X-A:', '1']],
  ['a value with CR', 'ERR_INVALID_CHAR', 200, { 'X-A': 'a\rb' }],
  ['a value with LF', 'ERR_INVALID_CHAR', 200, { 'X-A': 'a\nX-Injected: 1' }],
  ['a value with NUL', 'ERR_INVALID_CHAR', 200, { 'X-A': 'a\0b' }],
  // The addon gets the fields as one NUL-separated string (lib/headers.js):
  // a caller's NUL must not shift the separators into a valid-looking split.
  ['a header name with NUL', 'ERR_INVALID_HTTP_TOKEN', 200, { 'X-A\0X-B': '1' }],
  ['NULs that pair up into two valid-looking fields', 'ERR_INVALID_HTTP_TOKEN', 200, ['X-A\0b\0X-C', 'd']],
  ['a value ending in NUL', 'ERR_INVALID_CHAR', 200, { 'X-A': 'b\0' }],
  ['a value with another control character (0x01)', 'ERR_INVALID_CHAR', 200, { 'X-A': 'a\x01b' }],
  ['a value with DEL (0x7F)', 'ERR_INVALID_CHAR', 200, { 'X-A': 'a\x7fb' }],
  ['a value with a character above U+00FF', 'ERR_INVALID_CHAR', 200, { 'X-A': 'a\u0100b' }],
  ['a value with an emoji', 'ERR_INVALID_CHAR', 200, { 'X-A': '\u{1F600}' }],
  ['an invalid value inside an array value', 'ERR_INVALID_CHAR', 200, { 'Set-Cookie': ['a=1', 'b=\r\n'] }],
  ['an undefined value', 'ERR_HTTP_INVALID_HEADER_VALUE', 200, { 'X-A': undefined }],
  ['an undefined value in a flat array', 'ERR_HTTP_INVALID_HEADER_VALUE', 200, ['X-A', undefined]],
  ['an odd flat array', 'ERR_INVALID_ARG_VALUE', 200, ['X-A', '1', 'X-B']],
  ['a number as a header name in a flat array', 'ERR_INVALID_HTTP_TOKEN', 200, [1, 'x']],
  ['undefined inside an array value', 'ERR_HTTP_INVALID_HEADER_VALUE', 200, { 'X-A': ['a', undefined] }],
  ['an invalid header name with an empty array value', 'ERR_INVALID_HTTP_TOKEN', 200, { 'Bad Name': [] }],
];

for (const entry of Object.keys(entryPoints)) {
  describe(`${entry}(): bad input gets Node's own error, nothing written`, () => {
    for (const [name, code, status, headers] of badInputs) {
      test(`${name}: ${code}`, async () => {
        const { node, fast } = await differential({
          request: get(),
          handler: (req, res, ctx) => {
            ctx.attempt(entry, () => entryPoints[entry](ctx, res, status, headers, BODY));
            ctx.record('bytesWritten after the throw', req.socket.bytesWritten);
            ctx.record('headersSent after the throw', res.headersSent);
            res.statusCode = 200;
            res.end('after the error');
          },
          fast: 0,
          // template(): the error comes from template creation itself.
          fallback: entry === 'send' ? [{ invalid: 1 }, {}] : {},
        });
        for (const run of [node, fast]) {
          const call = run.rec.calls.find((c) => c.threw);
          assert.ok(call, `${entry} threw`);
          assert.equal(call.threw.code, code);
          assert.equal(run.rec.custom[0].value, 0, 'no byte written before the throw');
          assertOneResponse(run.bytes);
        }
      });
    }

    // Node 18's writeHead() renders the new head over the old one
    // (WRITEHEAD_RERENDERS): send() goes out, with the body fast, and the
    // end() after it is a write after end, as with writeHead() + end().
    test('ERR_HTTP_HEADERS_SENT when writeHead() already rendered the head (nothing sent yet)', async () => {
      const tail = 'after the error';
      const { fast } = await differential({
        request: get(),
        handler: (req, res, ctx) => {
          res.writeHead(200, { 'Content-Length': tail.length });
          ctx.attempt(entry, () => entryPoints[entry](ctx, res, 201, { 'X-A': 'b' }, BODY));
          ctx.record('bytesWritten after the throw', req.socket.bytesWritten);
          res.end(tail);
        },
        ...byHeadRenderer({
          addon: { fast: 0, fallback: { 'head-rendered': 1 } },
          node: { fast: 1, fallback: {} },
        }),
      });
      if (WRITEHEAD_RERENDERS) {
        assert.equal(fast.rec.calls.find((c) => c.threw), undefined);
        assert.ok(fast.rec.custom[0].value > 0, 'send() wrote the response');
        assert.deepEqual(fast.rec.events.filter((e) => e.at === 'res0:error').map((e) => e.error.code),
                         ['ERR_STREAM_WRITE_AFTER_END']);
        const text = fast.bytes.toString('latin1');
        assert.equal(text.split('HTTP/1.1 ').length, 2, `exactly one response: ${JSON.stringify(text)}`);
        assert.ok(fast.bytes.subarray(-Buffer.byteLength(BODY)).equals(Buffer.from(BODY)), text);
      } else {
        assert.equal(fast.rec.calls.find((c) => c.threw).threw.code, 'ERR_HTTP_HEADERS_SENT');
        assert.equal(fast.rec.custom[0].value, 0);
        assertOneResponse(fast.bytes);
      }
    });

    test('ERR_HTTP_HEADERS_SENT after res.write() sent the head', async () => {
      const { fast } = await differential({
        request: get(),
        handler: (req, res, ctx) => {
          res.write('first part');
          ctx.attempt(entry, () => entryPoints[entry](ctx, res, 200, {}, BODY));
          res.end(' and the end');
        },
        // Node 18 renders (and sends) a second head inside the chunked body
        // (WRITEHEAD_RERENDERS); res.write() left the socket corked until
        // the next tick, so end() leaves the body to Node.
        ...byHeadRenderer({
          addon: { fast: 0, fallback: { 'head-rendered': 1 } },
          node: { fast: 0, fallback: { 'socket-busy': 1 } },
        }),
      });
      if (WRITEHEAD_RERENDERS) {
        assert.equal(fast.rec.calls.find((c) => c.threw), undefined);
      } else {
        assert.equal(fast.rec.calls.find((c) => c.threw).threw.code, 'ERR_HTTP_HEADERS_SENT');
      }
    });

    test('a body that is not a string or bytes: the same error as writeHead + end', async () => {
      const { fast } = await differential({
        request: get('/', 'Connection: close\r\n'),
        expect: { untilClose: true },
        allowEmpty: true,
        handler: (req, res, ctx) => {
          ctx.attempt(entry, () => entryPoints[entry](ctx, res, 200, {}, 42));
          if (!res.writableEnded) res.end();
        },
        fast: 0,
        fallback: { 'body-type': 1 },
      });
      assert.equal(fast.rec.calls.find((c) => c.threw).threw.code, 'ERR_INVALID_ARG_TYPE');
    });
  });
}

describe('send(), json() and template() on an HTTP/2 compatibility response', () => {
  async function h2Exchange(handler) {
    const sessions = new Set();
    const server = http2.createServer((req, res) => {
      try {
        handler(req, res);
      } catch (err) {
        res.stream.destroy(err);
      }
    });
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
        req.on('end', () => resolve({ headers, body: Buffer.concat(chunks).toString() }));
        req.on('error', reject);
        req.end();
      }), 10000, 'http2 response');
    } finally {
      client.destroy();
      for (const session of sessions) session.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  const strip = (headers) => {
    const copy = { ...headers };
    delete copy.date;
    return copy;
  };

  for (const [name, viaFast, viaNode] of [
    ['send', (res) => fastResponse.send(res, 201, { 'X-A': 'b' }, BODY),
      (res) => referenceSend(res, 201, { 'X-A': 'b' }, BODY)],
    ['send without a body', (res) => fastResponse.send(res, 204, { 'X-A': 'b' }),
      (res) => referenceSend(res, 204, { 'X-A': 'b' })],
    ['json', (res) => fastResponse.json(res, 200, { a: BODY }),
      (res) => referenceSend(res, 200, ['Content-Type', 'application/json; charset=utf-8'], JSON.stringify({ a: BODY }))],
    ['template', (res) => fastResponse.template(202, { 'X-T': '1' }).send(res, BODY),
      (res) => referenceSend(res, 202, { 'X-T': '1' }, BODY)],
  ]) {
    test(`${name}: the same response as writeHead() + end() on it`, async () => {
      const fast = await h2Exchange((req, res) => viaFast(res));
      const node = await h2Exchange((req, res) => viaNode(res));
      assert.deepEqual(strip(fast.headers), strip(node.headers));
      assert.equal(fast.body, node.body);
    });
  }
});

describe('template()', () => {
  // Node's writeHead() on a real response of a live server, for comparison.
  async function writeHeadErrors(inputs) {
    const errors = [];
    const server = http.createServer((req, res) => {
      for (const [status, headers] of inputs) {
        const r = new http.ServerResponse(req);
        try {
          r.writeHead(status, headers);
          errors.push(null);
        } catch (err) {
          errors.push(err);
        }
      }
      res.end('ok');
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await new Promise((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: server.address().port, agent: false }, (res) => {
          res.resume();
          res.on('end', resolve);
        }).on('error', reject);
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    return errors;
  }

  test('invalid arguments throw at creation with the error writeHead() throws', async () => {
    const inputs = badInputs.map(([, , status, headers]) => [status, headers]);
    const expected = await writeHeadErrors(inputs);
    for (let i = 0; i < inputs.length; i++) {
      const [name, code] = badInputs[i];
      assert.ok(expected[i] instanceof Error, `writeHead rejects ${name}`);
      assert.throws(() => fastResponse.template(...inputs[i]), (err) => {
        assert.equal(err.constructor, expected[i].constructor, name);
        assert.equal(err.code, code, name);
        assert.equal(err.code, expected[i].code, name);
        assert.equal(err.message, expected[i].message, name);
        return true;
      }, name);
    }
  });

  test('a template shared by two servers (and many requests) gives each Node\'s bytes', async () => {
    const headers = { 'Content-Type': 'text/plain', 'X-Shared': 'yes' };
    const shared = fastResponse.template(200, headers);
    for (const timeout of [5000, 2500]) {
      await differential({
        request: get('/1') + get('/2') + get('/3', 'Connection: close\r\n'),
        setup: (server) => { server.keepAliveTimeout = timeout; },
        handler: (req, res, ctx) => setImmediate(() => {
          if (ctx.label === 'fast') shared.send(res, `body ${req.url}`);
          else referenceSend(res, 200, headers, `body ${req.url}`);
        }),
      });
    }
  });

  test('mutating the headers object after creation does not change the output', async () => {
    const headers = { 'X-A': 'original', 'Set-Cookie': ['a=1'] };
    const list = ['X-L', 'original', 'X-Arr', ['1']];
    const tpl = fastResponse.template(200, headers);
    const tplList = fastResponse.template(200, list);
    const original = { 'X-A': 'original', 'Set-Cookie': ['a=1'] };
    headers['X-A'] = 'changed';
    headers['X-New'] = 'added';
    headers['Set-Cookie'].push('b=2');
    list[1] = 'changed';
    list[3].push('changed');
    list.push('X-New', 'added');
    for (const transport of ['tcp', 'tls']) {
      const { fast } = await differential({
        transport,
        request: get(),
        handler: (req, res, ctx) => {
          if (ctx.label === 'fast') tpl.send(res, BODY);
          else referenceSend(res, 200, original, BODY);
        },
        ...(transport === 'tls' ? { fast: 0, fallback: { tls: 1 } } : {}),
      });
      const text = fast.bytes.toString('latin1');
      assert.ok(text.includes('X-A: original\r\n') && !text.includes('changed') &&
                !text.includes('X-New') && !text.includes('b=2'), text);
      const listRun = await differential({
        transport,
        request: get(),
        handler: (req, res, ctx) => {
          if (ctx.label === 'fast') tplList.send(res, BODY);
          else referenceSend(res, 200, ['X-L', 'original', 'X-Arr', ['1']], BODY);
        },
        ...(transport === 'tls' ? { fast: 0, fallback: { tls: 1 } } : {}),
      });
      assert.ok(!listRun.fast.bytes.toString('latin1').includes('changed'));
    }
  });

  test('template().statusCode is the status code', () => {
    assert.equal(fastResponse.template(201, {}).statusCode, 201);
  });
});
