'use strict';

// Smoke test for the sanitizer build (test/native/asan.js runs it with
// FAST_RESPONSE_ADDON pointing at the ASan+UBSan addon): serves responses
// through fastEnd (also after writeHead(): a chunked body), send and
// template, with small and large bodies (string
// UTF-8 and latin1, Buffer), slow readers (partial writes, EAGAIN, the rest
// handed to socket.write()), HEAD, pipelining, clients that disappear
// mid-response (EPIPE/ECONNRESET) and invalid fields. Checks every byte the
// client receives. Runs with the normal build too: node test/native/asan-smoke.js

const assert = require('node:assert');
const crypto = require('node:crypto');
const http = require('node:http');
const net = require('node:net');
const path = require('node:path');

const root = path.join(__dirname, '..', '..');
const { binding, loadError } = require(path.join(root, 'lib', 'binding.js'));
const fastResponse = require(root);

if (binding === null) {
  console.error('asan-smoke: the addon did not load:', loadError && loadError.message);
  process.exit(1);
}
if (process.env.FAST_RESPONSE_ADDON) {
  console.log(`asan-smoke: addon ${process.env.FAST_RESPONSE_ADDON}`);
}

const uninstall = fastResponse.install();

const MB = 1024 * 1024;
const bodies = {
  small: 'hello world',
  utf8: 'héllo wörld ✓ 😀 '.repeat(300000),          // ~6 MB as UTF-8
  latin1: 'caf\xe9 '.repeat(800000),                  // 4 MB as latin1
  buffer: crypto.randomBytes(8 * MB),
  empty: '',
};
const byteLength = (name) => {
  const b = bodies[name];
  if (Buffer.isBuffer(b)) return b.length;
  return Buffer.byteLength(b, name === 'latin1' ? 'latin1' : 'utf8');
};
const expected = (name) => {
  const b = bodies[name];
  if (Buffer.isBuffer(b)) return b;
  return Buffer.from(b, name === 'latin1' ? 'latin1' : 'utf8');
};
const sha = (buf) => crypto.createHash('sha256').update(buf).digest('hex');

const jsonTemplate = fastResponse.template(200, {
  'Content-Type': 'application/json',
  'X-Template': 'yes',
});

let errors = 0;
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  const kind = url.searchParams.get('body') || 'small';
  const api = url.pathname.slice(1);
  const body = bodies[kind];
  const enc = kind === 'latin1' ? 'latin1' : undefined;
  res.on('error', () => { errors++; });
  switch (api) {
    case 'fastEnd':
      res.setHeader('Content-Type', 'text/plain');
      res.setHeader('X-Body', kind);
      if (enc) res.fastEnd(body, enc);
      else res.fastEnd(body);
      break;
    case 'writeHead':
      // No Content-Length: Transfer-Encoding: chunked, the body one chunk.
      res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Body': kind });
      if (enc) res.fastEnd(body, enc);
      else res.fastEnd(body);
      break;
    case 'send':
      fastResponse.send(res, 201, ['Content-Type', 'text/plain', 'X-Body', kind],
                        enc ? Buffer.from(body, enc) : body);
      break;
    case 'template':
      jsonTemplate.send(res, enc ? Buffer.from(body, enc) : body);
      break;
    case 'invalid':
      // ERR_INVALID_CHAR / ERR_INVALID_HTTP_TOKEN from the native checks.
      for (const [headers, code] of [[{ 'X-Bad': 'a\r\nb' }, 'ERR_INVALID_CHAR'],
                                     [{ 'Bad Name': 'x' }, 'ERR_INVALID_HTTP_TOKEN'],
                                     [['X', '\0'], 'ERR_INVALID_CHAR']]) {
        assert.throws(() => fastResponse.send(res, 200, headers, 'x'), { code });
      }
      assert.throws(() => fastResponse.send(res, 1000, {}, 'x'),
                    { code: 'ERR_HTTP_INVALID_STATUS_CODE' });
      fastResponse.send(res, 200, { 'Content-Type': 'text/plain' }, 'still fine');
      break;
    default:
      res.statusCode = 404;
      res.fastEnd('not found');
  }
});

function get(pathname, { agent, method = 'GET', slow = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ port: server.address().port, path: pathname, method, agent }, (res) => {
      const chunks = [];
      if (slow) {
        // Read nothing for a while: the server's writev(2) meets a full
        // socket buffer and hands the rest to socket.write().
        res.pause();
        setTimeout(() => res.resume(), 150);
      }
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ res, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function checked(api, kind, options) {
  const { res, body } = await get(`/${api}?body=${kind}`, options);
  assert.strictEqual(res.statusCode, api === 'send' ? 201 : 200, `${api} ${kind}`);
  const want = options && options.method === 'HEAD' ? Buffer.alloc(0) : expected(kind);
  assert.strictEqual(body.length, want.length, `${api} ${kind} length`);
  assert.strictEqual(sha(body), sha(want), `${api} ${kind} bytes`);
  const head = options && options.method === 'HEAD';
  if (api === 'writeHead' && !head) {
    assert.strictEqual(res.headers['transfer-encoding'], 'chunked');
  } else if (!head) {
    assert.strictEqual(Number(res.headers['content-length']), byteLength(kind));
  }
}

// Several pipelined requests on one connection, read back raw.
function pipelined(count) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.address().port);
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (d) => {
      text += d;
      const done = text.split('HTTP/1.1 200 OK').length - 1;
      if (done === count && text.endsWith('hello world')) {
        socket.end();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.write('GET /fastEnd HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(count));
  });
}

// A client that reads a little of a large response and vanishes.
function vanishing(api, kind) {
  return new Promise((resolve) => {
    const socket = net.connect(server.address().port);
    socket.on('data', () => socket.destroy());
    socket.on('close', resolve);
    socket.on('error', () => {});
    socket.write(`GET /${api}?body=${kind} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

async function main() {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const apis = ['fastEnd', 'send', 'template', 'writeHead'];

  for (let i = 0; i < 200; i++) {
    await checked(apis[i % apis.length], i % 5 === 0 ? 'empty' : 'small', { agent });
  }
  await Promise.all(Array.from({ length: 60 }, (_, i) =>
    checked(apis[i % apis.length], 'small', { agent })));
  for (const api of apis) {
    for (const kind of ['utf8', 'latin1', 'buffer']) {
      await checked(api, kind, { agent });
      await checked(api, kind, { agent, slow: true });
    }
  }
  for (const api of apis) await checked(api, 'utf8', { agent, method: 'HEAD' });
  const raw = await pipelined(20);
  assert.strictEqual(raw.split('HTTP/1.1 200 OK').length - 1, 20);
  for (const api of apis) {
    for (const kind of ['utf8', 'buffer']) await vanishing(api, kind);
  }
  const { body } = await get('/invalid', { agent });
  assert.strictEqual(body.toString(), 'still fine');
  // The server survives the vanished clients and keeps serving.
  await checked('fastEnd', 'small', { agent });

  agent.destroy();
  await new Promise((resolve) => server.close(resolve));
  const s = fastResponse.stats();
  uninstall();
  console.log('asan-smoke: stats', JSON.stringify(s), 'response errors', errors);
  assert.ok(s.fast > 250, 'the fast path ran');
  assert.ok(s.partial > 0, 'partial writes happened');
  console.log('asan-smoke: ok');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
