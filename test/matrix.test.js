'use strict';

// The generated conformance matrix: request method × status × body × head
// state × connection. Every cell runs the same handler on two servers, one
// ending the response with Node's own `res.end()`, the other with
// `res.fastEnd()` (first pass) or with plain `res.end()` under
// `install({ patchEnd: true })` (second pass). A raw client's received bytes
// (Date masked) and what the server sees of each response (event order,
// callback, state after end() and at 'finish', `_header`, thrown errors)
// must be equal. Node's own output is the reference, whatever the version.
//
// The handler records the stats() delta around its own end call, so each
// response knows whether it took the fast path; a summary is printed and the
// cells where the fast path must apply are required to have taken it.
//
// Speed: one pair of servers serves many cells (the URL names the cell);
// each cell opens its own connections; 16 cells are in flight per worker
// thread, and two worker threads (shards) share the cells, the second one's
// servers with keepAliveTimeout 5500.5 and maxRequestsPerSocket 1000.
// Every wait is bounded. FAST_RESPONSE_MATRIX_ONLY=<regexp> runs a subset
// (investigations only).

const assert = require('node:assert/strict');
const { isDeepStrictEqual } = require('node:util');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');

const fastResponse = require('..');
const h = require('./matrix-harness');

const { http } = h;
const nodeEnd = http.ServerResponse.prototype.end;

// ---------------------------------------------------------------------------
// The dimensions.

const METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS'];
const POST_BODY = 'unread=request&body=1';

// 'continue' and 'processing': writeContinue() / writeProcessing() first,
// then the final status 200.
const STATUSES = ['continue', 'processing', 200, 204, 205, 304, 404, 500];

const LARGE = 4 * 1024 * 1024; // more than the socket buffer (tcp_wmem max)
const largeString = ('large body ✓ 𝄞 é ' + 'x'.repeat(45) + '\n').repeat(
  Math.ceil(LARGE / 64)).slice(0, LARGE);
const uint8 = (() => {
  // A view at an offset into a larger buffer: the byteOffset must be honored.
  const text = Buffer.from('uint8array body ✓\n');
  const backing = new Uint8Array(text.length + 16).fill(0x21);
  backing.set(text, 7);
  return backing.subarray(7, 7 + text.length);
})();

/** Each body: the arguments before the callback. */
const BODIES = {
  'absent': () => [],
  'empty': () => [''],
  'ascii': () => ['hello, world\n'],
  'utf8': () => ['héllo wörld — ✓ 𝄞 日本語\n'],
  'latin1': () => ['caf\u00e9 na\u00efve \u00ff\u00a9\n', 'latin1'],
  'hex': () => ['48657820626f6479e29c930a', 'hex'],
  'base64': () => [Buffer.from('base64 body ✓\n').toString('base64'), 'base64'],
  'buffer': () => [Buffer.from('buffer body ✓\n')],
  'uint8array': () => [uint8],
  'large': () => [largeString],
};
const SMALL_BODIES = Object.keys(BODIES).filter((b) => b !== 'large');

const HEADS = {
  'none'(res, status) {
    res.statusCode = status;
  },
  'setHeader'(res, status) {
    res.statusCode = status;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-List', ['a', 'b']);
    res.setHeader('Set-Cookie', ['a=1', 'b=2']);
    res.setHeader('X-Number', 42);
  },
  'writeHead-object'(res, status) {
    res.writeHead(status, { 'Content-Type': 'text/plain', 'X-Object': 'o' });
  },
  'writeHead-array'(res, status) {
    res.writeHead(status, ['Content-Type', 'text/plain', 'X-Array', 'a', 'X-Array', 'b']);
  },
  'writeHead-merge'(res, status) {
    res.setHeader('X-Set', 's');
    res.setHeader('Content-Type', 'text/html');
    res.writeHead(status, 'Merged Reason', { 'content-type': 'text/plain', 'X-Write': 'w' });
  },
};

// How requests are sent: HTTP version, request fields, requests per write.
const CONNECTIONS = {
  'http1.0': { version: '1.0', fields: '', count: 1 },
  'http1.0-keep-alive': { version: '1.0', fields: 'Connection: keep-alive\r\n', count: 1 },
  'http1.1-keep-alive': { version: '1.1', fields: '', count: 1 },
  'connection-close': { version: '1.1', fields: 'Connection: close\r\n', count: 1 },
  // Pipelined depth 1 and 8: that many requests queued behind the first,
  // all in one write.
  'pipelined-1': { version: '1.1', fields: '', count: 2 },
  'pipelined-8': { version: '1.1', fields: '', count: 9 },
};
const NOT_PIPELINED = ['http1.0', 'http1.0-keep-alive', 'http1.1-keep-alive', 'connection-close'];

// The matrix. The fastEnd pass runs the full product of the small bodies
// with every other dimension; the 4 MiB body (4 MiB per response and side)
// runs with fewer heads, statuses and connections. The patchEnd pass runs
// every method × status × body × head combination once, the connection
// taking turns (every pair of dimension values meets: checked below).
const LARGE_METHODS = ['GET', 'HEAD', 'POST'];
const LARGE_STATUSES = ['continue', 200, 304, 500];
const LARGE_HEADS = ['none', 'writeHead-array'];
const LARGE_CONNECTIONS = ['http1.1-keep-alive', 'http1.0', 'pipelined-1'];

// FAST_RESPONSE_MATRIX_ONLY=<regexp>: only the cells whose name matches
// (for investigating one discrepancy; the full matrix runs without it).
const ONLY = process.env.FAST_RESPONSE_MATRIX_ONLY ?
  new RegExp(process.env.FAST_RESPONSE_MATRIX_ONLY) : null;

const cells = [];
const passCells = { fastEnd: [], patchEnd: [] };
function addCell(pass, method, status, body, head, connection) {
  const cell = { id: cells.length, pass, method, status, body, head, connection };
  if (ONLY !== null && !ONLY.test(cellName(cell))) return;
  cells.push(cell);
  passCells[pass].push(cell);
}
let turn = 0;
for (const method of METHODS) {
  for (const status of STATUSES) {
    for (const body of Object.keys(BODIES)) {
      for (const head of Object.keys(HEADS)) {
        if (body === 'large') {
          if (!LARGE_METHODS.includes(method) || !LARGE_STATUSES.includes(status) ||
              !LARGE_HEADS.includes(head)) continue;
          for (const connection of LARGE_CONNECTIONS) {
            addCell('fastEnd', method, status, body, head, connection);
          }
          addCell('patchEnd', method, status, body, head,
                  LARGE_CONNECTIONS[turn++ % LARGE_CONNECTIONS.length]);
          continue;
        }
        for (const connection of Object.keys(CONNECTIONS)) {
          addCell('fastEnd', method, status, body, head, connection);
        }
        const connections = Object.keys(CONNECTIONS);
        addCell('patchEnd', method, status, body, head, connections[turn++ % connections.length]);
      }
    }
  }
}

function cellName(c) {
  return `${c.method} ${c.status} body=${c.body} head=${c.head} ${c.connection}`;
}

function requestBytes(cell, pass) {
  const conn = CONNECTIONS[cell.connection];
  let out = '';
  for (let i = 0; i < conn.count; i++) {
    out += `${cell.method} /${pass}/${cell.id}/${i} HTTP/${conn.version}\r\nHost: t\r\n${conn.fields}`;
    if (cell.method === 'POST') {
      out += `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${POST_BODY.length}\r\n\r\n${POST_BODY}`;
    } else {
      out += '\r\n';
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// The servers: one per side, for all cells of a pass.

// key `${side}/${pass}/${cell}/${index}` -> record of one response
const records = new Map();

function handler(side) {
  return (req, res) => {
    if (h.handleSentinel(req, res, nodeEnd)) return;
    const m = /^\/(\w+)\/(\d+)\/(\d+)$/.exec(req.url);
    const pass = m[1];
    const cell = cells[Number(m[2])];
    if (cell.pass !== pass) throw new Error(`cell ${cell.id} is not in pass ${pass}`);
    const rec = {
      events: [],
      threw: null,
      returnedRes: null,
      afterEnd: null,
      atFinish: null,
      delta: null,
      closed: null,
    };
    rec.closed = new Promise((resolve) => {
      res.on('close', () => {
        rec.events.push('close');
        setImmediate(resolve);
      });
    });
    records.set(`${side}/${pass}/${cell.id}/${m[3]}`, rec);
    res.on('prefinish', () => rec.events.push('prefinish'));
    res.on('finish', () => {
      rec.events.push('finish');
      rec.atFinish = h.snapshot(res);
    });
    res.on('error', (err) => rec.events.push(['error', h.errorInfo(err)]));
    const count = CONNECTIONS[cell.connection].count;
    if (count > 1 && Number(m[3]) === count - 1) {
      // A pipelined cell ends with the server closing the connection after
      // the last response: Node itself may interleave a later response's
      // 100 Continue with an earlier response's head and body, which no
      // client can frame, so the client just reads until the close.
      res.on('finish', () => setImmediate(() => req.socket.end()));
    }

    try {
      if (cell.status === 'continue') res.writeContinue();
      if (cell.status === 'processing') res.writeProcessing();
      const status = typeof cell.status === 'number' ? cell.status : 200;
      HEADS[cell.head](res, status);
    } catch (err) {
      rec.events.push(['setup-threw', h.errorInfo(err)]);
    }

    const args = BODIES[cell.body]();
    args.push(function callback(...cbArgs) {
      rec.events.push(['callback', cbArgs.map(h.errorInfo)]);
    });
    let fn;
    if (side === 'node') fn = nodeEnd;
    else if (pass === 'fastEnd') fn = res.fastEnd;
    else fn = res.end; // patched by install({ patchEnd: true })
    const before = fastResponse.stats();
    try {
      rec.returnedRes = fn.apply(res, args) === res;
    } catch (err) {
      rec.threw = h.errorInfo(err);
    }
    rec.delta = h.statsDelta(before, fastResponse.stats());
    rec.afterEnd = h.snapshot(res);
  };
}

function comparable(rec) {
  if (rec === undefined) return undefined;
  const { events, threw, returnedRes, afterEnd, atFinish } = rec;
  return { events, threw, returnedRes, afterEnd, atFinish };
}

async function runSide(side, port, cell, pass) {
  const conn = CONNECTIONS[cell.connection];
  const methods = new Array(conn.count).fill(cell.method);
  // After the responses, a keep-alive connection gets the sentinel request
  // (is it still usable?); a pipelined one is closed by the server.
  const followUp = conn.count > 1 ? 'none' : 'sentinel';
  const client = await h.exchange(port, requestBytes(cell, pass), { methods, followUp });
  const server = [];
  for (let i = 0; i < conn.count; i++) {
    const rec = records.get(`${side}/${pass}/${cell.id}/${i}`);
    if (rec !== undefined) {
      await h.withTimeout(rec.closed, 10000, `'close' of ${side} ${cellName(cell)} #${i}`);
      records.delete(`${side}/${pass}/${cell.id}/${i}`);
    }
    server.push(rec);
  }
  return { client, server };
}

function diff(a, b) {
  for (const key of Object.keys(a)) {
    if (!isDeepStrictEqual(a[key], b[key])) return key;
  }
  return null;
}

async function runPass(pass, ports, shardCells) {
  const failures = [];
  const perCell = [];
  await h.pool(shardCells, 16, async (cell) => {
    let node;
    let fast;
    try {
      [node, fast] = await Promise.all([
        runSide('node', ports.node, cell, pass),
        runSide('fast', ports.fast, cell, pass),
      ]);
    } catch (err) {
      failures.push(`${cellName(cell)}: ${err.message}`);
      return;
    }
    const problems = [];
    if (!node.client.bytes.equals(fast.client.bytes)) {
      const a = node.client.bytes.toString('latin1');
      const b = fast.client.bytes.toString('latin1');
      let at = 0;
      while (at < a.length && a[at] === b[at]) at++;
      problems.push(`bytes differ at ${at} (node ${a.length}, fast ${b.length}): ` +
        `node ${JSON.stringify(a.slice(Math.max(0, at - 120), at + 80))} ` +
        `fast ${JSON.stringify(b.slice(Math.max(0, at - 120), at + 80))}`);
    }
    if (node.client.end !== fast.client.end || node.client.sentinel !== fast.client.sentinel) {
      problems.push(`connection end: node ${node.client.end}/${node.client.sentinel} ` +
        `fast ${fast.client.end}/${fast.client.sentinel}`);
    }
    for (let i = 0; i < node.server.length; i++) {
      const a = comparable(node.server[i]);
      const b = comparable(fast.server[i]);
      if (a === undefined || b === undefined) {
        if (a !== b) problems.push(`response #${i} seen by one side only`);
        continue;
      }
      const key = diff(a, b);
      if (key !== null) {
        problems.push(`response #${i} ${key}: node ${JSON.stringify(a[key])} ` +
          `fast ${JSON.stringify(b[key])}`);
      }
      const d = node.server[i].delta;
      if (d.fast + d.partial + d.fallback !== 0) problems.push(`node side touched fast-response: ${JSON.stringify(d)}`);
    }
    if (problems.length) failures.push(`${cellName(cell)}:\n    ${problems.join('\n    ')}`);
    perCell[cell.id] = fast.server.map((r) => r && r.delta);
  }, () => h.BAIL && failures.length > 0);
  const notRun = shardCells.filter((c) => perCell[c.id] === undefined).length;
  if (notRun > 0 && failures.length > 0) failures.push(`${notRun} cells not run after the first failure`);
  return { failures, perCell };
}

// ---------------------------------------------------------------------------
// Summary and the fast-path requirement.

function summarize(pass, perCell) {
  const s = { cells: passCells[pass].length, responses: 0, fast: 0, partial: 0, fallback: 0, reasons: {} };
  for (const cell of passCells[pass]) {
    for (const d of perCell[cell.id] || []) {
      if (!d) continue;
      s.responses++;
      s.fast += d.fast;
      s.partial += d.partial;
      s.fallback += d.fallback;
      for (const [k, v] of Object.entries(d.reasons)) s.reasons[k] = (s.reasons[k] || 0) + v;
    }
  }
  const reasons = Object.entries(s.reasons).sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`).join(', ');
  console.log(`matrix ${pass} on Node ${process.version}: ${s.cells} cells, ` +
    `${s.responses} responses: fast ${s.fast} (${s.partial} of them partial writes), ` +
    `fallback ${s.fallback} (${reasons})`);
  return s;
}

/**
 * The cells whose first response (the socket's current one) must take the
 * fast path: a non-empty body and a head not rendered by writeHead() (Node
 * renders that one chunked, which the fast path leaves to Node, except on
 * HTTP/1.0 and for responses without a body).
 */
function mustBeFast(cell) {
  return cell.body !== 'absent' && cell.body !== 'empty' &&
    (cell.head === 'none' || cell.head === 'setHeader');
}

/** The brief's core: every response of these cells is written fast. */
function isCore(cell) {
  return cell.method !== 'HEAD' && [200, 404, 500].includes(cell.status) &&
    cell.body !== 'absent' && cell.body !== 'empty' && NOT_PIPELINED.includes(cell.connection);
}

function assertFastEnough(pass, perCell) {
  const slow = [];
  let required = 0;
  let core = 0;
  for (const cell of passCells[pass]) {
    const deltas = perCell[cell.id];
    if (deltas === undefined) continue; // reported as a failure already
    if (mustBeFast(cell)) {
      required++;
      const d = deltas[0];
      if (!d || d.fast + d.partial !== 1) slow.push(`${cellName(cell)}: ${JSON.stringify(d)}`);
    }
    if (isCore(cell)) {
      core++;
      if (!deltas.every((d) => d && d.fast + d.partial === 1)) {
        slow.push(`core ${cellName(cell)}: ${JSON.stringify(deltas)}`);
      }
    }
  }
  console.log(`matrix ${pass}: ${required} cells must take the fast path, ${core} of them core cells`);
  if (ONLY === null) assert.ok(core >= (pass === 'fastEnd' ? 3 * 3 * 7 * 5 * 4 : 100), `core cells: ${core}`);
  assert.deepEqual(slow.slice(0, 20), [], `${slow.length} of ${required} cells that must take the fast path did not`);
}

/** In the patchEnd pass every pair of values of two dimensions meets. */
function assertPairwise(pass) {
  const dims = ['method', 'status', 'body', 'head', 'connection'];
  const seen = new Set();
  for (const c of passCells[pass]) {
    for (const a of dims) for (const b of dims) if (a < b) seen.add(`${a}=${c[a]}/${b}=${c[b]}`);
  }
  const values = {
    method: METHODS, status: STATUSES, body: SMALL_BODIES, head: Object.keys(HEADS),
    connection: Object.keys(CONNECTIONS),
  };
  const missing = [];
  for (const a of dims) {
    for (const b of dims) {
      if (a >= b) continue;
      for (const x of values[a]) for (const y of values[b]) {
        if (!seen.has(`${a}=${x}/${b}=${y}`)) missing.push(`${a}=${x}/${b}=${y}`);
      }
    }
  }
  assert.deepEqual(missing, []);
}

// ---------------------------------------------------------------------------
// The cells are split between two worker threads (each with its own pair of
// servers, clients, addon instance and stats): the two cores work at once.

const SHARDS = 2;

// The servers of the second shard are configured otherwise than Node's
// defaults: a keepAliveTimeout with a fraction (`Keep-Alive: timeout=5`
// from 5500.5 ms) and maxRequestsPerSocket (`, max=1000`), so half of the
// cells, spread over every dimension, see that head too.
const SERVER_CONFIG = [{}, { keepAliveTimeout: 5500.5, maxRequestsPerSocket: 1000 }];

async function workerMain({ shard }) {
  const servers = { node: http.createServer(handler('node')), fast: http.createServer(handler('fast')) };
  for (const server of Object.values(servers)) Object.assign(server, SERVER_CONFIG[shard]);
  const ports = { node: await h.listen(servers.node), fast: await h.listen(servers.fast) };
  const results = {};
  try {
    for (const pass of ['fastEnd', 'patchEnd']) {
      const mine = passCells[pass].filter((c) => c.id % SHARDS === shard);
      fastResponse.install(pass === 'patchEnd' ? { patchEnd: true } : undefined);
      try {
        if (h.BAIL && results.fastEnd && results.fastEnd.failures.length > 0) {
          results[pass] = { failures: ['not run after a failure (bail)'], perCell: [] };
          continue;
        }
        const { failures, perCell } = await runPass(pass, ports, mine);
        results[pass] = { failures, perCell: mine.map((c) => [c.id, perCell[c.id]]) };
      } finally {
        fastResponse.uninstall();
      }
    }
  } finally {
    await Promise.all([h.closeServer(servers.node), h.closeServer(servers.fast)]);
  }
  results.recordsLeft = records.size;
  return results;
}

function runShard(shard) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(__filename, { workerData: { shard } });
    const timer = setTimeout(() => {
      worker.terminate();
      reject(new Error(`matrix shard ${shard} did not finish in time`));
    }, 270000);
    let result = null;
    worker.on('message', (m) => {
      result = m;
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      clearTimeout(timer);
      if (result !== null && code === 0) resolve(result);
      else reject(new Error(`matrix shard ${shard} exited with ${code} without results`));
    });
  });
}

if (!isMainThread) {
  workerMain(workerData).then((results) => parentPort.postMessage(results), (err) => {
    throw err;
  });
} else {
  const { test } = require('node:test');
  test('conformance matrix: res.end() vs res.fastEnd() and install({ patchEnd: true })', {
    timeout: 300000,
  }, async (t) => {
    const shards = await Promise.all(Array.from({ length: SHARDS }, (_, i) => runShard(i)));
    for (const pass of ['fastEnd', 'patchEnd']) {
      await t.test(`${pass}: ${passCells[pass].length} cells`, () => {
        if (pass === 'patchEnd' && ONLY === null) assertPairwise(pass);
        const failures = [];
        const perCell = [];
        for (const shard of shards) {
          failures.push(...shard[pass].failures);
          for (const [id, deltas] of shard[pass].perCell) perCell[id] = deltas;
        }
        summarize(pass, perCell);
        assert.deepEqual(failures.slice(0, 10), [], `${failures.length} cells differ`);
        assertFastEnough(pass, perCell);
      });
    }
    for (const shard of shards) assert.equal(shard.recordsLeft, 0, 'every response was awaited');
  });
}
