'use strict';

const { withTimeout, deferred, statsDelta } = require('./raw-http');

// The differential harness: one handler, run twice — once with Node's own
// `res.end()` (or `writeHead()` + `end()` for send/template/json), once with
// the fast path — each on a fresh server on 127.0.0.1:0. A raw client sends
// the exact request bytes (several pipelined requests in one write when the
// test says so) and records every byte it receives. The server side records
// the events each response and socket see and the response's state after
// end() and at 'finish'. Both runs must agree on all of it (the Date value
// aside), and the fast run must really have taken the fast path.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const path = require('node:path');
const tls = require('node:tls');
const { Duplex } = require('node:stream');
const { isDeepStrictEqual } = require('node:util');

const fastResponse = require('../..');
const { withContentLength } = require('../../lib/send');

/** Upper bound of every wait in the harness. */
const TIMEOUT_MS = 10000;

const fixtures = path.join(__dirname, '..', 'fixtures');
const tlsOptions = {
  key: fs.readFileSync(path.join(fixtures, 'key.pem')),
  cert: fs.readFileSync(path.join(fixtures, 'cert.pem')),
};

// ---------------------------------------------------------------------------
// Small utilities

/** `Date: <anything>\r\n` with a fixed value (header strings and wire bytes). */
function maskDate(text) {
  if (typeof text !== 'string') return text;
  return text.replace(/(^|\r\n)(date): [^\r\n]*\r\n/gi, '$1$2: <masked>\r\n');
}

/** What identifies an error for the comparison. */
function errorInfo(err) {
  if (err === null || err === undefined) return err;
  if (!(err instanceof Error)) return { notAnError: String(err) };
  return {
    class: err.constructor.name,
    name: err.name,
    code: err.code,
    message: err.message,
  };
}



// ---------------------------------------------------------------------------
// Response framing on the client side (just enough to know when the
// expected responses are complete).

/**
 * The request methods in `text` (requests without bodies, or with bodies
 * whose bytes contain no request line).
 */
function requestMethods(text) {
  const methods = [];
  const re = /(?:^|\r\n\r\n)([A-Z]+) \S+ HTTP\/\d\.\d\r\n/g;
  let m;
  while ((m = re.exec(text)) !== null) {
    methods.push(m[1]);
    re.lastIndex = m.index + 1;
  }
  return methods;
}

/**
 * Splits `buf` into complete responses. Returns `{ responses, closeDelimited,
 * needed }` where `closeDelimited` says that the next response's body lasts
 * until the connection closes, and `needed` how many bytes the next one needs
 * at least (0: unknown).
 */
function parseResponses(buf, methods) {
  const responses = [];
  let pos = 0;
  let closeDelimited = false;
  let needed = 0; // bytes needed before the next response can be complete
  while (pos < buf.length) {
    const end = buf.indexOf('\r\n\r\n', pos, 'latin1');
    if (end === -1) break;
    const head = buf.toString('latin1', pos, end + 4);
    const lines = head.split('\r\n');
    const statusMatch = /^HTTP\/(\d\.\d) (\d{3})/.exec(lines[0]);
    if (statusMatch === null) {
      // Not a response: everything after is unparseable, wait for close.
      closeDelimited = true;
      break;
    }
    const version = statusMatch[1];
    const status = Number(statusMatch[2]);
    const fields = {};
    for (const line of lines.slice(1)) {
      if (line === '') continue;
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      (fields[name] ??= []).push(line.slice(colon + 1).trim());
    }
    const bodyStart = end + 4;
    if (status >= 100 && status <= 199 && status !== 101) {
      pos = bodyStart; // informational: the final response follows
      continue;
    }
    const method = methods[responses.length] || 'GET';
    const connection = (fields.connection || []).join(',').toLowerCase();
    const closes = /\bclose\b/.test(connection) ||
      (version === '1.0' && !/\bkeep-alive\b/.test(connection));
    let bodyEnd;
    if (method === 'HEAD' || status === 204 || status === 304) {
      bodyEnd = bodyStart;
    } else if (/\bchunked\b/i.test((fields['transfer-encoding'] || []).join(','))) {
      let p = bodyStart;
      bodyEnd = -1;
      for (;;) {
        const lineEnd = buf.indexOf('\r\n', p, 'latin1');
        if (lineEnd === -1) break;
        const size = parseInt(buf.toString('latin1', p, lineEnd), 16);
        if (Number.isNaN(size)) {
          closeDelimited = true;
          break;
        }
        if (size === 0) {
          const trailerEnd = buf.indexOf('\r\n\r\n', lineEnd, 'latin1');
          if (trailerEnd !== -1) bodyEnd = trailerEnd + 4;
          else if (buf.toString('latin1', lineEnd, lineEnd + 4) === '\r\n\r\n') bodyEnd = lineEnd + 4;
          break;
        }
        p = lineEnd + 2 + size + 2;
        if (p > buf.length) break;
      }
      if (bodyEnd === -1) break;
    } else if (fields['content-length']) {
      bodyEnd = bodyStart + Number(fields['content-length'][0]);
      if (bodyEnd > buf.length) {
        needed = bodyEnd;
        break;
      }
    } else {
      closeDelimited = true;
      break;
    }
    responses.push({ status, version, fields, closes, method });
    pos = bodyEnd;
  }
  return { responses, closeDelimited, needed };
}

// ---------------------------------------------------------------------------
// Servers and clients

function makeServer(transport, serverOptions, listener) {
  if (transport === 'tls') {
    return https.createServer({ ...tlsOptions, ...serverOptions }, listener);
  }
  return http.createServer(serverOptions || {}, listener);
}

function listen(server) {
  return withTimeout(new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.removeListener('error', reject);
      resolve(server.address().port);
    });
  }), TIMEOUT_MS, 'server.listen');
}

async function closeServer(server) {
  if (typeof server.closeAllConnections === 'function') server.closeAllConnections();
  if (!server.listening) return;
  await withTimeout(new Promise((resolve) => server.close(() => resolve())),
                    TIMEOUT_MS, 'server.close');
}

/**
 * A pair of connected Duplex streams without a file descriptor: what one
 * writes, the other reads.
 */
function duplexPair() {
  const pair = [];
  const make = (other) => new Duplex({
    read() {},
    write(chunk, encoding, callback) {
      other().push(chunk);
      callback();
    },
    final(callback) {
      other().push(null);
      callback();
    },
    destroy(err, callback) {
      const peer = other();
      if (peer && !peer.destroyed) peer.push(null);
      callback(err);
    },
  });
  pair.push(make(() => pair[1]), make(() => pair[0]));
  return pair;
}

/**
 * Sends `request` in one write and collects the answer.
 *
 * `expect.responses`: the number of responses that end the exchange; after
 * them the client waits for the server to close only when the last one says
 * the connection closes (and `expect.waitForClose` is not false). `expect.untilClose`: collect until the server
 * closes, whatever the framing. `pauseUntil`: a promise; the client reads
 * nothing before it settles.
 */
function runClient({ transport, port, server, request, expect, pauseUntil, onSocket }) {
  const result = deferred();
  const chunks = [];
  let received = 0;
  let needed = 0;
  let settled = false;
  let socket;
  // Several bursts: each sent in one write once every response to the
  // bursts before it has arrived (a pipelining client, as wrk's).
  const bursts = Array.isArray(request) ? request : [request];
  const methods = requestMethods(bursts.map((b) => Buffer.from(b).toString('latin1')).join(''));
  const wanted = expect.responses ?? methods.length;
  let sent = 1;
  let answered = requestMethods(Buffer.from(bursts[0]).toString('latin1')).length;

  const finish = (serverClosed) => {
    if (settled) return;
    settled = true;
    const bytes = Buffer.concat(chunks);
    if (!socket.destroyed) socket.destroy();
    result.resolve({ bytes, serverClosed });
  };

  const check = () => {
    if (settled || (expect.untilClose && sent === bursts.length) || received < needed) return;
    const bytes = Buffer.concat(chunks);
    const parsed = parseResponses(bytes, methods);
    const { responses } = parsed;
    needed = parsed.needed;
    while (sent < bursts.length && responses.length >= answered &&
           !(responses.length > 0 && responses[responses.length - 1].closes)) {
      answered += requestMethods(Buffer.from(bursts[sent]).toString('latin1')).length;
      socket.write(bursts[sent++]);
    }
    if (expect.untilClose) return;
    if (responses.length >= wanted &&
        (!responses[wanted - 1].closes || expect.waitForClose === false)) {
      finish(false);
    }
  };

  const onConnect = () => {
    socket.write(bursts[0]);
    if (pauseUntil !== undefined) {
      socket.pause();
      Promise.resolve(pauseUntil).finally(() => {
        if (!socket.destroyed) socket.resume();
      });
    }
  };

  if (transport === 'duplex') {
    const [serverSide, clientSide] = duplexPair();
    socket = clientSide;
    // As net.Server does for each accepted connection.
    server.emit('connection', serverSide);
    process.nextTick(onConnect);
  } else if (transport === 'tls') {
    socket = tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false, servername: 'localhost' }, onConnect);
  } else {
    socket = net.connect({ port, host: '127.0.0.1' }, onConnect);
  }
  if (onSocket) onSocket(socket);
  socket.on('data', (chunk) => {
    chunks.push(chunk);
    received += chunk.length;
    check();
  });
  socket.on('end', () => finish(true));
  socket.on('close', () => finish(true));
  socket.on('error', (err) => {
    // A reset after everything arrived counts as a close; anything else fails.
    if (err.code === 'ECONNRESET') finish(true);
    else if (!settled) {
      settled = true;
      result.reject(err);
    }
  });
  return withTimeout(result.promise, TIMEOUT_MS,
                     `client waiting for ${expect.untilClose ? 'close' : wanted + ' response(s)'}`)
    .catch((err) => {
      if (!socket.destroyed) socket.destroy();
      err.message += `; received so far: ${JSON.stringify(maskDate(Buffer.concat(chunks).toString('latin1')).slice(0, 2000))}`;
      throw err;
    });
}

// ---------------------------------------------------------------------------
// The API a handler uses: Node's in the reference run, the package's in the
// fast run.

const JSON_TYPE = 'application/json; charset=utf-8';

function hasContentType(headers) {
  if (headers === undefined || headers === null) return false;
  if (Array.isArray(headers)) {
    if (headers.length && Array.isArray(headers[0])) {
      return headers.some((e) => String(e[0]).toLowerCase() === 'content-type');
    }
    for (let i = 0; i < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === 'content-type') return true;
    }
    return false;
  }
  return Object.keys(headers).some((k) => k.toLowerCase() === 'content-type');
}

/** What the package documents send() to be: writeHead(s, h2) + end(data). */
function referenceSend(res, statusCode, headers, data) {
  res.writeHead(statusCode, withContentLength(res, statusCode, headers, data));
  return res.end(data);
}

function referenceJson(res, statusCode, value, headers) {
  const body = JSON.stringify(value);
  if (typeof body !== 'string') {
    const err = new TypeError(
      `The argument 'value' is invalid. Received ${typeof value}: it has no JSON representation`);
    err.code = 'ERR_INVALID_ARG_VALUE';
    throw err;
  }
  let merged;
  if (hasContentType(headers)) merged = headers;
  else if (Array.isArray(headers)) {
    merged = headers.length && Array.isArray(headers[0]) ?
      [['Content-Type', JSON_TYPE], ...headers] :
      ['Content-Type', JSON_TYPE, ...headers];
  } else if (headers === undefined || headers === null) merged = ['Content-Type', JSON_TYPE];
  else merged = { 'Content-Type': JSON_TYPE, ...headers };
  return referenceSend(res, statusCode, merged, body);
}

function structuredCloneHeaders(headers) {
  if (Array.isArray(headers)) return headers.map(structuredCloneHeaders);
  if (headers === null || typeof headers !== 'object') return headers;
  const copy = {};
  for (const name of Object.keys(headers)) copy[name] = structuredCloneHeaders(headers[name]);
  return copy;
}

// A response that never sees a socket: template() must throw at creation
// what writeHead() throws for the same arguments.
function detachedResponse() {
  return new http.ServerResponse({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} });
}

function referenceTemplate(statusCode, headers) {
  detachedResponse().writeHead(statusCode, headers);
  // The headers as they are at creation, arrays inside them included.
  const snapshot = structuredCloneHeaders(headers);
  return { send: (res, data) => referenceSend(res, statusCode, snapshot, data) };
}

const nodeApi = {
  end: (res, ...args) => res.end(...args),
  write: (res, ...args) => res.write(...args),
  send: referenceSend,
  json: referenceJson,
  template: referenceTemplate,
};

const fastApi = {
  end: (res, ...args) => fastResponse.end(res, ...args),
  write: (res, ...args) => fastResponse.write(res, ...args),
  send: fastResponse.send,
  json: fastResponse.json,
  template: fastResponse.template,
};

// `res.fastEnd()` after install(); and install({ patchEnd: true }) with
// handlers that call plain `res.end()`.
const fastEndApi = {
  ...fastApi, end: (res, ...args) => res.fastEnd(...args), write: (res, ...args) => res.fastWrite(...args),
};
const patchedApi = { ...fastApi, end: (res, ...args) => res.end(...args), write: (res, ...args) => res.write(...args) };

// ---------------------------------------------------------------------------
// Recording

/** The response's state as the comparison sees it. */
function snapshot(res) {
  return {
    writableNeedDrain: res.writableNeedDrain,
    writableCorked: res.writableCorked,
    writableEnded: res.writableEnded,
    finished: res.finished,
    headersSent: res.headersSent,
    _headerSent: res._headerSent,
    _header: maskDate(res._header),
    _contentLength: res._contentLength,
    _last: res._last,
    _hasBody: res._hasBody,
    shouldKeepAlive: res.shouldKeepAlive,
    chunkedEncoding: res.chunkedEncoding,
    // What matchHeader() changes for the fields it sees.
    _removedConnection: res._removedConnection,
    _removedContLen: res._removedContLen,
    _removedTE: res._removedTE,
    _defaultKeepAlive: res._defaultKeepAlive,
    statusCode: res.statusCode,
    statusMessage: res.statusMessage,
  };
}

function createRecorder() {
  const events = [];
  const calls = [];
  const states = [];
  const custom = [];
  return { events, calls, states, custom };
}

/**
 * One run of the handler on a fresh server.
 * @returns {Promise<{ bytes: Buffer, serverClosed: boolean, rec: object,
 *   stats: object }>}
 */
async function runOnce(opts, api, label) {
  const rec = createRecorder();
  const transport = opts.transport || 'tcp';
  const sockets = [];
  const socketIds = new Map();
  const pending = [];
  const signals = new Map();
  const signal = (name) => {
    if (!signals.has(name)) signals.set(name, deferred());
    return signals.get(name);
  };
  let responseCount = 0;
  let clientSocket = null;

  // Writes the server's sockets hand to libuv (each one write(2) or
  // writev(2) when the socket takes it at once), to compare system calls.
  let handleWrites = 0;
  const watchSocket = (socket) => {
    if (socketIds.has(socket)) return socketIds.get(socket);
    const id = socketIds.size;
    socketIds.set(socket, id);
    countHandleWrites(socket._handle, () => { handleWrites++; });
    const closed = deferred();
    sockets.push({ socket, closed: closed.promise });
    socket.on('error', (err) => rec.events.push(`socket${id}:error:${err.code || err.message}`));
    socket.on('close', () => {
      rec.events.push(`socket${id}:close`);
      closed.resolve();
    });
    return id;
  };

  const listener = (req, res) => {
    const i = responseCount++;
    const socket = req.socket;
    const sid = watchSocket(socket);
    const ev = (name) => rec.events.push(`res${i}:${name}`);
    res.on('prefinish', () => ev('prefinish'));
    res.on('finish', () => {
      ev('finish');
      rec.states.push({
        at: `res${i}:finish`,
        ...snapshot(res),
        writableFinished: res.writableFinished,
        socketBytesWritten: transport === 'duplex' ? null : socket.bytesWritten,
      });
    });
    res.on('close', () => {
      ev('close');
      // What the socket counts as written by then, written or not (a
      // client that reset the connection: the failed write's count).
      rec.states.push({ at: `res${i}:close`, socketBytesWritten: transport === 'duplex' ? null : socket.bytesWritten });
    });
    res.on('error', (err) => rec.events.push({ at: `res${i}:error`, error: errorInfo(err) }));

    const record = (what, fn) => {
      let ret;
      try {
        ret = fn();
      } catch (err) {
        rec.events.push(`res${i}:${what}:threw`);
        rec.calls.push({ at: `res${i}:${what}`, threw: errorInfo(err), state: snapshot(res) });
        throw err;
      }
      // In the event sequence too: 'prefinish' comes before end() returns.
      rec.events.push(`res${i}:${what}:returned`);
      rec.calls.push({
        at: `res${i}:${what}`,
        returned: ret === res ? 'res' : (ret && typeof ret === 'object' ? 'object' : ret),
        state: snapshot(res),
      });
      return ret;
    };
    const wrapped = {
      end: (r, ...args) => record('end', () => api.end(r, ...args)),
      write: (r, ...args) => record('write', () => api.write(r, ...args)),
      send: (r, ...args) => record('send', () => api.send(r, ...args)),
      json: (r, ...args) => record('json', () => api.json(r, ...args)),
      template: (...args) => {
        const tpl = record('template', () => api.template(...args));
        return { send: (r, data) => record('template.send', () => tpl.send(r, data)) };
      },
    };
    const ctx = {
      index: i,
      socketIndex: sid,
      label,
      api: wrapped,
      rawApi: api,
      fastResponse,
      /** Records a value for the comparison. */
      record: (key, value) => rec.custom.push({ at: `res${i}:${key}`, value }),
      /** A callback that records its calls. */
      callback: (name = 'callback') => (...args) => {
        rec.events.push({
          at: `res${i}:${name}`,
          args: args.map((a) => (a instanceof Error ? errorInfo(a) : a)),
          writableFinished: res.writableFinished,
        });
      },
      /** Runs fn, records whatever it throws (and does not rethrow). */
      attempt: (what, fn) => {
        try {
          record(what, fn);
          return null;
        } catch (err) {
          return err;
        }
      },
      signal: (name) => signal(name),
      /** The client's end of the connection (to reset it, for example). */
      clientSocket: () => clientSocket,
      snapshot: () => snapshot(res),
      shared: opts.shared ? opts.shared(label) : undefined,
    };
    let out;
    try {
      out = opts.handler(req, res, ctx);
    } catch (err) {
      rec.events.push({ at: `res${i}:handler-threw`, error: errorInfo(err) });
      if (!res.writableEnded) res.destroy();
    }
    if (out && typeof out.then === 'function') {
      pending.push(out.then(() => {}, (err) => {
        rec.events.push({ at: `res${i}:handler-rejected`, error: errorInfo(err) });
        if (!res.writableEnded) res.destroy();
      }));
    }
  };

  const server = makeServer(transport, opts.serverOptions, listener);
  server.on('clientError', (err, socket) => {
    rec.events.push(`server:clientError:${err.code}`);
    socket.destroy();
  });
  server.on('dropRequest', () => rec.events.push('server:dropRequest'));
  if (opts.setup) opts.setup(server, label);
  const port = transport === 'duplex' ? 0 : await listen(server);
  if (transport === 'tls') server.on('secureConnection', (s) => watchSocket(s));

  const before = fastResponse.stats();
  let client;
  try {
    client = await runClient({
      transport,
      port,
      server,
      request: opts.request,
      expect: opts.expect || {},
      pauseUntil: opts.pauseClientUntil ? signal(opts.pauseClientUntil).promise : undefined,
      onSocket: (s) => { clientSocket = s; },
    });
    // Everything the server side does after the client is gone.
    await withTimeout(Promise.all(pending), TIMEOUT_MS, 'handlers to settle');
    await withTimeout(Promise.all(sockets.map((s) => s.closed)), TIMEOUT_MS,
                      'server sockets to close');
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    for (const { socket } of sockets) socket.destroy();
    await closeServer(server);
  }
  const after = fastResponse.stats();
  return {
    bytes: client.bytes,
    serverClosed: client.serverClosed,
    rec,
    responses: responseCount,
    stats: statsDelta(before, after),
    // Writes to the kernel: the sockets' own and the addon's writev(2) calls.
    syscalls: handleWrites + (after.writev.calls - before.writev.calls),
  };
}

const HANDLE_WRITES = ['writev', 'writeBuffer', 'writeLatin1String', 'writeUtf8String', 'writeAsciiString',
                       'writeUcs2String'];

/** Calls `count` on each write a TCP or pipe handle is given. */
function countHandleWrites(handle, count) {
  if (handle === null || handle === undefined || typeof handle.writev !== 'function') return;
  for (const name of HANDLE_WRITES) {
    const original = handle[name];
    if (typeof original !== 'function') continue;
    handle[name] = function countedWrite(...args) {
      count();
      return Reflect.apply(original, this, args);
    };
  }
}


function assertSameBytes(actual, expected, what) {
  if (actual.equals(expected)) return;
  const a = maskDate(actual.toString('latin1'));
  const e = maskDate(expected.toString('latin1'));
  if (a === e) return;
  if (a.length + e.length < 20000) {
    assert.equal(a, e, `${what}: bytes differ`);
    return;
  }
  let i = 0;
  while (i < a.length && a[i] === e[i]) i++;
  assert.fail(`${what}: bytes differ at offset ${i} (lengths ${a.length} vs ${e.length}): ` +
              `${JSON.stringify(a.slice(Math.max(0, i - 80), i + 80))} vs ` +
              `${JSON.stringify(e.slice(Math.max(0, i - 80), i + 80))}`);
}

const modes = {
  fast: { api: fastApi },
  fastEnd: { api: fastEndApi, install: {} },
  patched: { api: patchedApi, install: { patchEnd: true } },
};

/**
 * Runs `opts.handler(req, res, ctx)` once with Node's API and once with the
 * package's, and asserts that both runs agree on every byte, event, call
 * result and state.
 *
 * opts:
 *   request         the request bytes (string or Buffer), sent in one write;
 *                   or an array of such bursts, each sent once the responses
 *                   to the ones before it arrived (pipelining)
 *   handler         (req, res, ctx) => void | Promise
 *   expect          { responses?: n, untilClose?: boolean, waitForClose?: boolean }
 *   mode            'fast' (fastResponse.end), 'fastEnd' (res.fastEnd after
 *                   install()), 'patched' (res.end after install({ patchEnd }))
 *   transport       'tcp' (default), 'tls', 'duplex'
 *   serverOptions   for http.createServer
 *   setup(server)   e.g. keepAliveTimeout
 *   fast            writes expected on the fast path (fast + partial),
 *                   default: one per response
 *   partial         minimum number of partial writes expected
 *   syscalls        false: skip the check that the fast run handed the
 *                   kernel no more writes than Node's (socket writes plus
 *                   the addon's writev(2) calls)
 *   writes          res.write() chunks the addon framed (stats().writes)
 *   heads           heads writeHead() rendered natively (stats().heads)
 *   fallback        { reason: count } expected, default {}
 *   pauseClientUntil  a signal name: the client reads nothing before a
 *                   handler calls ctx.signal(name).resolve()
 *
 * @returns {Promise<{ node: object, fast: object }>} both runs.
 */
async function differential(opts) {
  const mode = modes[opts.mode || 'fast'];
  assert.ok(mode, `unknown mode ${opts.mode}`);
  const node = await runOnce(opts, nodeApi, 'node');
  assert.deepEqual(node.stats, { fast: 0, partial: 0, writes: 0, heads: 0, fallback: 0, reasons: {} },
                   'the reference run must not touch the package');

  let uninstall = null;
  if (mode.install) uninstall = fastResponse.install(mode.install);
  let fast;
  try {
    fast = await runOnce(opts, mode.api, 'fast');
  } finally {
    if (uninstall) uninstall();
  }

  assert.ok(node.bytes.length > 0 || opts.allowEmpty, 'the reference run received nothing');
  assertSameBytes(fast.bytes, node.bytes, 'bytes on the wire');
  assert.equal(fast.serverClosed, node.serverClosed, 'whether the server closed the connection');
  assert.equal(fast.responses, node.responses, 'number of requests the server saw');
  assert.deepEqual(fast.rec.calls, node.rec.calls, 'return values, thrown errors and state after each call');
  assert.deepEqual(fast.rec.events, node.rec.events, 'events on responses and sockets, callbacks');
  assert.deepEqual(fast.rec.states, node.rec.states, 'state at finish');
  assert.deepEqual(fast.rec.custom, node.rec.custom, 'values recorded by the handler');

  // Never more writes to the kernel than Node's own path makes for the
  // same handler (a partial write hands its rest to the socket: one more).
  if (opts.syscalls !== false) {
    assert.ok(fast.syscalls <= node.syscalls + fast.stats.partial,
              `writes to the kernel: ${fast.syscalls} against Node's ${node.syscalls} ` +
              `(stats: ${JSON.stringify(fast.stats)})`);
  }

  const expectedFast = opts.fast ?? node.responses;
  assert.equal(fast.stats.fast + fast.stats.partial, expectedFast,
               `writes on the fast path (stats: ${JSON.stringify(fast.stats)})`);
  if (opts.heads !== undefined) {
    assert.equal(fast.stats.heads, opts.heads, `heads rendered by writeHead() (stats: ${JSON.stringify(fast.stats)})`);
  }
  if (opts.writes !== undefined) {
    assert.equal(fast.stats.writes, opts.writes, `chunks written by the addon (stats: ${JSON.stringify(fast.stats)})`);
  }
  if (opts.partial !== undefined) {
    assert.ok(fast.stats.partial >= opts.partial,
              `partial writes: expected at least ${opts.partial}, stats ${JSON.stringify(fast.stats)}`);
  }
  // An array: the fallback reasons of one of its entries (the reason can
  // differ between Node versions, e.g. res.write() sends the head at once on
  // Node 20 but buffers it on Node 26).
  const fallbacks = Array.isArray(opts.fallback) ? opts.fallback : [opts.fallback || {}];
  if (!fallbacks.some((f) => isDeepStrictEqual(fast.stats.reasons, f))) {
    assert.deepEqual(fast.stats.reasons, fallbacks[0], `fallback reasons (one of ${JSON.stringify(fallbacks)})`);
  }
  return { node, fast };
}

/** Simple GET request bytes. */
function get(path = '/', extra = '', method = 'GET', version = '1.1') {
  return `${method} ${path} HTTP/${version}\r\nHost: localhost\r\n${extra}\r\n`;
}

module.exports = {
  TIMEOUT_MS,
  differential,
  runOnce,
  runClient,
  parseResponses,
  requestMethods,
  maskDate,
  errorInfo,
  withTimeout,
  deferred,
  listen,
  closeServer,
  makeServer,
  duplexPair,
  snapshot,
  get,
  nodeApi,
  fastApi,
  referenceSend,
  tlsOptions,
};
