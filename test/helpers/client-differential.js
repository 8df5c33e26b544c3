'use strict';

const { CLIENT_PATH_GAINS } = require('../../lib/node-internals');

// The differential harness of outgoing requests: one client scenario, run
// once with Node's own `req.end()` and again with the package's
// (`req.fastEnd()` after install(), and `req.end()` under
// install({ patchEnd: true })), each against a fresh raw server (`net`,
// `tls`, or a Unix socket) that records every byte each connection
// receives and answers as the scenario says. Both runs must agree on the
// bytes of every connection (the port in Host masked), on the events of
// every request and response and their order, on the request's state at
// each of them, on errors (class, code, message) and on what the scenario
// records; and stats().requests of the package's run must say exactly which
// requests the package wrote and which it left to Node, and why.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const tls = require('node:tls');

const fastResponse = require('../..');
const { withTimeout, deferred, statsDelta } = require('./raw-http');
const { tlsOptions } = require('./differential');

const TIMEOUT_MS = 10000;

/** A plain 200 response with a 2-byte body, kept alive. */
const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok';

/** `text` with the port of a Host field and of a `host:port` masked, and a Date field's value. */
function maskPort(text) {
  return text.replace(/((?:127\.0\.0\.1|localhost)):\d+/g, '$1:<port>')
    .replace(/(^|\r\n)(date): [^\r\n]*\r\n/gi, '$1$2: <masked>\r\n');
}

function errorInfo(err) {
  if (!(err instanceof Error)) return { notAnError: String(err) };
  return { class: err.constructor.name, code: err.code, message: maskPort(err.message) };
}

// ---------------------------------------------------------------------------
// The raw server

/**
 * Parses the requests in `buf` from `at`: returns [{ head, size }] of the
 * complete ones and where the rest starts. Framing: Content-Length, chunked
 * (to the last chunk and the empty trailer line), else no body.
 */
function splitRequests(buf, at) {
  const out = [];
  for (;;) {
    const end = buf.indexOf('\r\n\r\n', at, 'latin1');
    if (end === -1) break;
    const head = buf.toString('latin1', at, end + 4);
    let size = end + 4 - at;
    const length = /\r\ncontent-length: *(\d+)\r\n/i.exec(head);
    if (length !== null) {
      size += Number(length[1]);
      if (at + size > buf.length) break;
    } else if (/\r\ntransfer-encoding:[^\r]*chunked/i.test(head)) {
      let p = end + 4;
      let done = -1;
      for (;;) {
        const line = buf.indexOf('\r\n', p, 'latin1');
        if (line === -1) break;
        const n = parseInt(buf.toString('latin1', p, line), 16);
        if (n === 0) {
          const trailerEnd = buf.indexOf('\r\n\r\n', line, 'latin1');
          if (trailerEnd !== -1) done = trailerEnd + 4;
          break;
        }
        p = line + 2 + n + 2;
        if (p > buf.length) break;
      }
      if (done === -1) break;
      size = done - at;
    }
    out.push({ head, size });
    at += size;
  }
  return { requests: out, rest: at };
}

/**
 * A server that records each connection's bytes and answers each request
 * with `answer(request, socket, index)`: by default OK. `answer` may write
 * anything, close or reset the socket, or do nothing. transport: 'tcp',
 * 'tls' (the bytes recorded are the decrypted ones) or 'unix'.
 */
async function rawServer({ transport = 'tcp', answer = (r, socket) => socket.write(OK) } = {}) {
  const connections = [];
  const sockets = new Set();
  let index = 0;
  const onConnection = (socket) => {
    const conn = { chunks: [], closed: deferred() };
    connections.push(conn);
    sockets.add(socket);
    let pending = Buffer.alloc(0);
    socket.on('data', (data) => {
      conn.chunks.push(data);
      pending = Buffer.concat([pending, data]);
      const { requests, rest } = splitRequests(pending, 0);
      pending = pending.subarray(rest);
      for (const request of requests) answer(request, socket, index++);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      conn.closed.resolve();
    });
  };
  let server;
  let address;
  if (transport === 'tls') {
    server = tls.createServer(tlsOptions, onConnection);
  } else {
    server = net.createServer(onConnection);
  }
  if (transport === 'unix') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fast-response-client-'));
    address = { socketPath: path.join(dir, 'server.sock'), dir };
    await new Promise((resolve) => server.listen(address.socketPath, resolve));
  } else {
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = { port: server.address().port };
  }
  return {
    ...address,
    connections,
    /** Each connection's bytes (latin1, port masked), in accept order. */
    bytes: () => connections.map((c) => maskPort(Buffer.concat(c.chunks).toString('latin1'))),
    async close() {
      for (const socket of sockets) socket.destroy();
      await Promise.all(connections.map((c) => c.closed.promise));
      await new Promise((resolve) => server.close(resolve));
      if (address.dir !== undefined) fs.rmSync(address.dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------
// Recording

/** The request's state as the comparison sees it. */
function snapshot(req) {
  return {
    _header: req._header === null ? null : maskPort(req._header),
    headersSent: req.headersSent,
    _headerSent: req._headerSent,
    finished: req.finished,
    writableEnded: req.writableEnded,
    writableFinished: req.writableFinished,
    destroyed: req.destroyed,
    _contentLength: req._contentLength,
    _last: req._last,
    shouldKeepAlive: req.shouldKeepAlive,
    chunkedEncoding: req.chunkedEncoding,
    _removedConnection: req._removedConnection,
    _removedContLen: req._removedContLen,
    _defaultKeepAlive: req._defaultKeepAlive,
    writableLength: req.writableLength,
    outputSize: req.outputSize,
    outputEntries: req.outputData.length,
    reusedSocket: req.reusedSocket,
  };
}

const modes = {
  node: { install: null, end: (req, ...args) => req.end(...args) },
  fastEnd: { install: {}, end: (req, ...args) => req.fastEnd(...args) },
  patched: { install: { patchEnd: true }, end: (req, ...args) => req.end(...args) },
};

/**
 * One run of `scenario.client(t)` in `mode` against a fresh raw server.
 * `t` gives the scenario what it needs: the server's address, `request()`
 * (http.request() with every event recorded under a label), `end()` (the
 * mode's end), `closed(req)`, `record()`, `agent()` (agents destroyed after
 * the run).
 */
async function runOnce(scenario, modeName) {
  const mode = modes[modeName];
  const server = await rawServer(scenario.server);
  const events = [];
  const states = [];
  const records = [];
  const agents = [];
  const closes = [];
  let uninstall = null;
  if (mode.install !== null) uninstall = fastResponse.install(mode.install);
  const before = fastResponse.stats().requests;
  const t = {
    mode: modeName,
    port: server.port,
    socketPath: server.socketPath,
    events,
    agent(options) {
      const agent = new http.Agent(options);
      agents.push(agent);
      return agent;
    },
    /** Records every event of `req` (and of its response and socket) under `label`. */
    watch(req, label) {
      const ev = (name, extra) => events.push(extra === undefined ? `${label}:${name}` : { at: `${label}:${name}`, ...extra });
      const state = (at) => states.push({ at: `${label}:${at}`, ...snapshot(req) });
      const closed = deferred();
      closes.push(closed.promise);
      req.on('socket', (socket) => {
        ev('socket', { reused: req.reusedSocket, connecting: socket.connecting === true });
        state('socket');
      });
      req.on('prefinish', () => ev('prefinish'));
      req.on('finish', () => {
        ev('finish');
        states.push({ at: `${label}:finish`, ...snapshot(req),
                      socketBytesWritten: req.socket ? req.socket.bytesWritten : null });
      });
      req.on('continue', () => ev('continue'));
      req.on('information', (info) => ev('information', { statusCode: info.statusCode }));
      req.on('timeout', () => ev('timeout'));
      req.on('abort', () => ev('abort'));
      req.on('error', (err) => ev('error', errorInfo(err)));
      req.on('close', () => {
        ev('close');
        state('close');
        closed.resolve();
      });
      req.on('response', (res) => {
        ev('response', { statusCode: res.statusCode, rawHeaders: res.rawHeaders, headers: res.headers });
        state('response');
        const body = [];
        res.on('data', (d) => body.push(d));
        res.on('end', () => ev('res:end', { body: Buffer.concat(body).toString('latin1') }));
        res.on('aborted', () => ev('res:aborted'));
        res.on('error', (err) => ev('res:error', errorInfo(err)));
        res.on('close', () => ev('res:close'));
      });
      return req;
    },
    /** http.request(options) watched under `label`. */
    request(options, label) {
      return t.watch(http.request({ host: '127.0.0.1', port: server.port, ...options }), label);
    },
    /** The mode's end(): Node's, req.fastEnd() or the patched req.end(). Records its return or throw. */
    end(req, label, ...args) {
      try {
        const ret = mode.end(req, ...args);
        events.push(`${label}:end:${ret === req ? 'returned req' : typeof ret}`);
      } catch (err) {
        events.push({ at: `${label}:end:threw`, ...errorInfo(err) });
      }
      states.push({ at: `${label}:after end`, ...snapshot(req) });
    },
    record(key, value) {
      records.push({ key, value });
    },
    /** Resolves once `req` emitted 'close'. */
    closed: (req) => new Promise((resolve) => (req.closed ? resolve() : req.once('close', resolve))),
  };
  let after;
  try {
    await withTimeout(Promise.resolve(scenario.client(t)), TIMEOUT_MS, `${modeName} run of the scenario`);
    await withTimeout(Promise.all(closes), TIMEOUT_MS, `${modeName}: every request to close`);
    // What the loop does after the last 'close' (the agent's 'free').
    await new Promise((resolve) => setImmediate(resolve));
    after = fastResponse.stats().requests;
  } finally {
    if (uninstall !== null) uninstall();
    for (const agent of agents) agent.destroy();
    await withTimeout(server.close(), TIMEOUT_MS, `${modeName}: the server to close`);
  }
  return {
    bytes: server.bytes(),
    events,
    states,
    records,
    stats: statsDelta(before, after),
  };
}

/**
 * The expectation of a keep-alive client: every request on a connection is
 * written by the package but the first, which Node writes once the
 * connection is made ('connecting'). From the reference run's connections.
 */
function firstPerConnection(run, also = {}) {
  let requests = 0;
  for (const bytes of run.bytes) requests += splitRequests(Buffer.from(bytes, 'latin1'), 0).requests.length;
  const connections = run.bytes.filter((b) => b.length > 0).length;
  const fallback = connections === 0 ? { ...also } : { connecting: connections, ...also };
  return { fast: requests - connections, fallback };
}

/** Events or states grouped by the label of their request, each group in order. */
function byLabel(list) {
  const groups = {};
  for (const entry of list) {
    const at = typeof entry === 'string' ? entry : entry.at;
    const label = at.slice(0, at.indexOf(':'));
    (groups[label] ??= []).push(entry);
  }
  return groups;
}

/**
 * Runs `scenario` with Node's end() and with the package's (modes fastEnd
 * and patched, or `scenario.modes`), and asserts that every run agrees with
 * Node's on bytes, events, state and records, and that stats().requests
 * says `scenario.expect` (or `scenario.expect[mode]`): { fast, fallback }
 * (fast: requests the package wrote, fast or partial; fallback: reasons and
 * counts, exactly); without `expect`, what a keep-alive client gets
 * (firstPerConnection()), plus the fallbacks `scenario.alsoFallback` names. `scenario.concurrent`: requests on parallel
 * connections, whose order between requests may differ from run to run:
 * bytes compared as a set of connections, events and states request by
 * request. Returns the runs.
 */
async function clientDifferential(scenario) {
  const node = await runOnce(scenario, 'node');
  assert.deepEqual(node.stats, { fast: 0, partial: 0, fallback: 0, reasons: {} },
                   'the reference run must not touch the package');
  const runs = { node };
  for (const mode of scenario.modes || ['fastEnd', 'patched']) {
    const run = await runOnce(scenario, mode);
    runs[mode] = run;
    if (scenario.concurrent) {
      // Connections in parallel: accepted, and answered, in either order.
      assert.deepEqual([...run.bytes].sort(), [...node.bytes].sort(), `${mode}: the bytes each connection received`);
      assert.deepEqual(byLabel(run.events), byLabel(node.events), `${mode}: each request's events and their order`);
      assert.deepEqual(byLabel(run.states), byLabel(node.states), `${mode}: each request's state`);
    } else {
      assert.deepEqual(run.bytes, node.bytes, `${mode}: the bytes each connection received`);
      assert.deepEqual(run.events, node.events, `${mode}: events and their order`);
      assert.deepEqual(run.states, node.states, `${mode}: request state`);
    }
    assert.deepEqual(run.records, node.records, `${mode}: values the scenario recorded`);
    if (!CLIENT_PATH_GAINS) {
      // Node 24+: requests are Node's (lib/node-internals.js); fastEnd()
      // counts each call so, patchEnd leaves req.end() alone.
      assert.equal(run.stats.fast + run.stats.partial, 0, `${mode}: no request written by the package`);
      const reasons = Object.keys(run.stats.reasons);
      // (a body Node refuses is judged before: 'body-type', 'encoding')
      assert.ok(reasons.every((r) => ['node-sends-request', 'request-end-replaced', 'body-type', 'encoding'].includes(r)),
                `${mode}: requests left to Node: ${JSON.stringify(run.stats.reasons)}`);
      if (mode === 'patched') assert.deepEqual(run.stats.reasons, {}, 'patchEnd leaves req.end() to Node');
      continue;
    }
    const expect = scenario.expect === undefined ?
      firstPerConnection(node, scenario.alsoFallback) : scenario.expect[mode] || scenario.expect;
    assert.equal(run.stats.fast + run.stats.partial, expect.fast,
                 `${mode}: requests the package wrote (stats().requests: ${JSON.stringify(run.stats)})`);
    assert.deepEqual(run.stats.reasons, expect.fallback || {},
                     `${mode}: requests left to Node, by reason`);
  }
  return runs;
}

module.exports = { clientDifferential, rawServer, runOnce, splitRequests, maskPort, OK, TIMEOUT_MS };
