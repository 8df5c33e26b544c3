'use strict';

// NODE_DEBUG=fast-response: install() says whether the addon loaded, and the
// first call that steps aside for each reason is logged once; without the
// variable nothing is written.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { CLIENT_PATH_GAINS } = require('../lib/node-internals');

const root = path.join(__dirname, '..');

// A server whose responses step aside for two reasons, three times and twice,
// and one that goes fast; prints stats() as JSON on stdout.
const APP = `
const http = require('node:http');
const fr = require(${JSON.stringify(root)});
fr.install({ patchEnd: true });
const server = http.createServer((req, res) => {
  if (req.url === '/empty') { res.end(Buffer.alloc(0)); return; }
  if (req.url === '/strict') { res.strictContentLength = true; res.setHeader('Content-Length', 4); res.end('body'); return; }
  res.end('fast');
});
server.listen(0, '127.0.0.1', async () => {
  const get = (p) => new Promise((resolve) => http.get({ port: server.address().port, path: p, agent: false },
    (r) => { r.resume(); r.on('end', resolve); }));
  for (const p of ['/empty', '/strict', '/empty', '/fast', '/strict', '/empty']) await get(p);
  process.stdout.write(JSON.stringify(fr.stats()));
  server.close();
});`;

function run(env) {
  const r = spawnSync(process.execPath, ['-e', APP], {
    env: { ...process.env, NODE_DEBUG: '', ...env }, encoding: 'utf8', timeout: 30000,
  });
  assert.equal(r.status, 0, r.stderr);
  return { stats: JSON.parse(r.stdout), lines: r.stderr.split('\n').filter((l) => /^FAST-RESPONSE \d+: /.test(l)) };
}

test('NODE_DEBUG=fast-response: install(), then each reason once, with status and body', () => {
  const { stats, lines: all } = run({ NODE_DEBUG: 'fast-response' });
  assert.deepEqual(stats.reasons, { 'empty-body': 3, 'strict-content-length': 2 });
  // The app's client requests have lines of their own (the next test).
  const lines = all.filter((l) => !/: request steps aside/.test(l));
  assert.equal(lines.length, 3, lines.join('\n'));
  assert.match(lines[0], /install\(\{ patchEnd: true \}\): the native addon is loaded$/);
  assert.match(lines[1], /steps aside to Node: empty-body \(an empty string or Buffer: .*\); status 200, a 0-byte body;/);
  assert.match(lines[2], /steps aside to Node: strict-content-length \(strictContentLength: .*\); status 200, a 4-character body;/);
});

test("NODE_DEBUG=fast-response: a client request's reason once, with method, path and body", () => {
  const { stats, lines } = run({ NODE_DEBUG: 'fast-response' });
  const requestLines = lines.filter((l) => /: request steps aside/.test(l));
  if (!CLIENT_PATH_GAINS) {
    // Node 24+: patchEnd leaves req.end() to Node (lib/node-internals.js).
    assert.deepEqual(stats.requests, { fast: 0, partial: 0, fallback: 0, reasons: {} });
    assert.deepEqual(requestLines, []);
    return;
  }
  // patchEnd covers http.get()'s end() too: each request (agent: false)
  // opens a connection, which Node writes at 'connect'.
  assert.deepEqual(stats.requests, { fast: 0, partial: 0, fallback: 6, reasons: { connecting: 6 } });
  assert.equal(requestLines.length, 1, lines.join('\n'));
  assert.match(requestLines[0], /request steps aside to Node: connecting \(the request's socket is still connecting .*\); GET \/empty, no body; logged once per reason$/);
});

test('without NODE_DEBUG nothing is logged', () => {
  const { stats, lines } = run({});
  assert.equal(stats.fallback, 5);
  assert.deepEqual(lines, []);
});

test('NODE_DEBUG=fast-response without the addon: install() says why', () => {
  const { lines } = run({ NODE_DEBUG: 'fast-response', FAST_RESPONSE_ADDON: path.join(root, 'no-such-addon.node') });
  assert.match(lines[0], /install\(\{ patchEnd: true \}\): the native addon did not load, every call is Node's own: Cannot find module/);
  assert.ok(lines.some((l) => /steps aside to Node: no-addon \(the native addon did not load/.test(l)), lines.join('\n'));
});
