'use strict';

// `npm run test:load`: many concurrent keep-alive connections and many
// requests through fastEnd(), send(), template() and json(), streamed
// res.fastWrite() chunks (three in one tick, joined on Node 18 and 20),
// mixed with Node's own res.write() + res.end() and with fastEnd() calls
// that fall back to it; some connections pipeline 16 requests deep (a few of those read
// slowly), the others send one request at a time and ask for
// `Connection: close` every 16th request, to be replaced by a new one.
// Every response is checked byte for byte by a raw `net` client in a child
// process (it parses Content-Length and chunked framing; each body names its
// request id, so order is checked too). The server (this process) checks
// that its file descriptors come back to their count before the run, that
// its RSS grows by less than --rss-limit MiB from the end of the warm-up to
// the end of the run, and that no socket saw an error.
//
// The run stops at checkpoints: after warm-up (the first half of the
// requests), at three quarters and at the end. At each, every connection is
// open and idle, and the server measures its RSS after full garbage
// collections: the figures are taken in the same state, so their difference
// is growth, not load. (The first half is long: RSS with Node's own end()
// alone, --baseline, still moves by 10-20 MiB after the first quarter
// before it flattens; a leak keeps climbing. A run of 1,000,000 requests on
// 200 connections grew by 9.5 MiB on Node 26 and -2.6 MiB on Node 20 after
// its first quarter.)
//
// Prints a table of figures; exits 1 when a check fails.
//
//   node scripts/load.js [--connections 1000] [--requests 200000]
//                        [--pipelined-every 10] [--depth 16]
//                        [--rss-limit 20] [--timeout 600] [--json]
//                        [--baseline]
//
// --pipelined-every N: every Nth connection pipelines --depth requests, the
// others send one request at a time. --json adds the figures as one JSON
// line (the last line of stdout), for test/load-small.test.js. --baseline
// runs the same with Node's own writeHead() + end() in place of every
// fast-response call, to compare figures.

const { fork, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const v8 = require('node:v8');
const vm = require('node:vm');

const MiB = 1024 * 1024;

function parseArgs(argv) {
  const opts = {
    connections: 1000,
    requests: 200000,
    pipelinedEvery: 10,
    depth: 16,
    rssLimit: 20,
    timeout: 600,
    json: false,
    client: false,
    baseline: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') {
      opts.json = true;
    } else if (arg === '--baseline') {
      opts.baseline = true;
    } else if (arg === '--client') {
      opts.client = true;
    } else if (arg.startsWith('--')) {
      const key = arg.slice(2).replace(/-([a-z])/g, (m, c) => c.toUpperCase());
      const value = Number(argv[++i]);
      if (!(key in opts) || typeof opts[key] !== 'number' || !Number.isFinite(value) || value <= 0) {
        throw new Error(`bad option ${arg} ${argv[i]}`);
      }
      opts[key] = value;
    } else {
      throw new Error(`unknown argument ${arg}`);
    }
  }
  return opts;
}

// ---------------------------------------------------------------------------
// What each request asks for, computed from its id alone, on both sides.

const KINDS = [
  'fastEnd string', // res.fastEnd(string with é and €)
  'fastEnd Buffer', // setHeader() + res.fastEnd(Buffer)
  'send string', // fastResponse.send(res, 200, headers, string)
  'template Buffer', // template.send(res, Buffer)
  'json', // fastResponse.json(res, 200, { id, pad })
  'write+end', // res.write() + res.end(): Node's own, chunked
  'write+fastEnd', // res.write() + res.fastEnd(): falls back (head sent)
  'setHeader+end', // Node's own res.end() with Content-Length
  'fastWrite x3+end', // res.fastWrite() string, Buffer, string in one tick, res.end(): framed, joined
];
const CHUNKED_KINDS = new Set([5, 6, 8]);

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_';
const FILLER = ALPHABET.repeat(4096); // 256 KiB of ASCII
const FILLER_MB = ('é€' + ALPHABET).repeat(4096); // with 2- and 3-byte characters

// Slow readers: a few pipelining connections read with pauses and ask for
// 128-192 KiB bodies (`/r/<id>/slow`), so that Node's backpressure and the
// fast path's hand-over to socket.write() are exercised under load. Each
// sends at most SLOW_REQUESTS requests, which keeps the bytes of the run in
// bounds. (Larger bodies make partial writes more frequent, but make RSS
// swing by tens of MiB with Node's own end() as well: malloc, not leaks.)
const SLOW_EVERY = 5; // of the pipelining connections
const SLOW_REQUESTS = 48;
const SLOW_PAUSE_MS = 5;
// One-at-a-time connections are closed (`Connection: close`) and replaced
// after this many requests.
const CLOSE_AFTER = 16;

function plan(id, slow) {
  const kind = id % KINDS.length;
  // Every 97th body is 64-160 KiB: more than a busy socket takes at once.
  let size = 16 + ((id * 131) % 2000);
  if (slow) size = 128 * 1024 + ((id * 7919) % (64 * 1024));
  else if (id % 97 === 13) size = 65536 + ((id * 7919) % 98304);
  // A third of the responses are written a turn later, once they are their
  // socket's current response (pipelined ones wait for that).
  return { kind, size, deferred: Math.floor(id / KINDS.length) % 3 === 0 };
}

/** The body text of request `id`; it starts with `id=<id>;`. */
function bodyText(id, slow) {
  const { kind, size } = plan(id, slow);
  const source = kind === 0 || kind === 2 || kind === 8 ? FILLER_MB : FILLER;
  const start = id % 64;
  const text = `id=${id};` + source.slice(start, start + size);
  return kind === 4 ? JSON.stringify({ id, pad: text }) : text;
}

// ---------------------------------------------------------------------------
// Server (this process).

function openFds() {
  return fs.readdirSync('/proc/self/fd').length;
}

function formatMiB(bytes) {
  return `${(bytes / MiB).toFixed(1)} MiB`;
}

// The server runs with a fixed-size young generation and a fixed malloc
// mmap threshold. Left adaptive, both grow RSS during the run by themselves
// (V8 enlarges the young generation as the allocation rate rises; glibc
// raises its mmap threshold after the first large body is freed, and later
// large bodies then fragment the heap): 10-90 MiB here with Node's own end()
// alone (--baseline), which would hide or mimic a leak.
const V8_FLAGS = ['--min-semi-space-size=16', '--max-semi-space-size=16'];
const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * Re-runs this script with V8_FLAGS, MALLOC_ENV and, when the limit is too
 * low for the connections, a raised `ulimit -n`. Returns when this process
 * is already that one.
 */
function prepareProcess(opts) {
  // Server and client each hold one descriptor per connection, plus margin.
  const need = opts.connections + 256;
  const current = Number(spawnSync('bash', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim());
  const ready = current >= need && V8_FLAGS.every((flag) => process.execArgv.includes(flag)) &&
    Object.keys(MALLOC_ENV).every((name) => process.env[name] === MALLOC_ENV[name]);
  if (ready) return;
  if (process.env.FAST_RESPONSE_LOAD_REEXEC === '1') {
    console.error(`ulimit -n is ${current}, ${need} are needed, and it could not be raised`);
    process.exit(1);
  }
  const ulimit = current >= need ? '' : `ulimit -n ${Math.max(8192, need)} && `;
  const r = spawnSync('bash', [
    '-c', `${ulimit}exec "$@"`, 'bash',
    process.execPath, ...V8_FLAGS, ...process.execArgv, __filename, ...process.argv.slice(2),
  ], { stdio: 'inherit', env: { ...process.env, ...MALLOC_ENV, FAST_RESPONSE_LOAD_REEXEC: '1' } });
  process.exit(r.status === null ? 1 : r.status);
}

async function server(opts) {
  prepareProcess(opts);
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const fastResponse = require('..');
  fastResponse.install();
  fastResponse.resetStats();
  if (opts.baseline) useNodeOnly(fastResponse);

  const tpl = fastResponse.template(200, { 'Content-Type': 'application/octet-stream', 'X-Kind': 'template' });
  const f = {
    node: process.version,
    connections: opts.connections,
    pipelinedConnections: Math.ceil(opts.connections / opts.pipelinedEvery),
    requests: opts.requests,
    warmup: Math.max(1, Math.floor(opts.requests / 2)),
    checkpoints: [],
    rssSamples: [],
    handled: 0,
    socketErrors: [],
    clientErrors: [],
    handlerErrors: [],
    memory: {},
  };
  let openSockets = 0;
  let peakSockets = 0;
  // The client stops at each checkpoint, all connections idle, for the
  // server to measure its RSS: after warm-up, at 3/4 and at the end.
  f.checkpoints = [...new Set([f.warmup, Math.floor(opts.requests * 3 / 4), opts.requests])];

  function respond(req, res) {
    const m = /^\/r\/(\d+)(\/slow)?$/.exec(req.url);
    if (m === null) {
      res.statusCode = 404;
      res.end('no such request');
      return;
    }
    f.handled++;
    const id = Number(m[1]);
    const slow = m[2] !== undefined;
    const { kind, deferred } = plan(id, slow);
    const text = bodyText(id, slow);
    const run = () => {
      try {
        switch (kind) {
          case 0:
            res.fastEnd(text);
            break;
          case 1:
            res.setHeader('Content-Type', 'application/octet-stream');
            res.fastEnd(Buffer.from(text));
            break;
          case 2:
            fastResponse.send(res, 200, { 'Content-Type': 'text/plain; charset=utf-8' }, text);
            break;
          case 3:
            tpl.send(res, Buffer.from(text));
            break;
          case 4:
            fastResponse.json(res, 200, JSON.parse(text));
            break;
          case 5:
            res.write(text.slice(0, text.length >> 1));
            res.end(text.slice(text.length >> 1));
            break;
          case 6:
            res.write(text.slice(0, text.length >> 1));
            res.fastEnd(text.slice(text.length >> 1));
            break;
          case 8: {
            const third = Math.ceil(text.length / 3);
            res.fastWrite(text.slice(0, third));
            res.fastWrite(Buffer.from(text.slice(third, 2 * third)));
            res.fastWrite(text.slice(2 * third));
            res.end();
            break;
          }
          default:
            res.setHeader('Content-Type', 'text/plain');
            res.end(text);
        }
      } catch (err) {
        f.handlerErrors.push(`${id}: ${err.stack}`);
        res.destroy(err);
      }
    };
    if (!deferred) {
      run();
    } else if (res.socket !== null) {
      setImmediate(run);
    } else {
      // A pipelined response waiting for the ones before it: written a
      // turn after it becomes the socket's current one, as an application
      // that answers in order would (the fast path then meets a socket
      // that may still be full).
      res.once('socket', () => setImmediate(run));
    }
  }

  // Connections stay open for the whole run, idle ones included.
  const srv = http.createServer({ requestTimeout: 0, headersTimeout: 0 }, respond);
  srv.keepAliveTimeout = opts.timeout * 1000;
  srv.on('connection', (socket) => {
    openSockets++;
    peakSockets = Math.max(peakSockets, openSockets);
    socket.on('error', (err) => f.socketErrors.push(err.code || err.message));
    socket.on('close', () => openSockets--);
  });
  srv.on('clientError', (err, socket) => {
    f.clientErrors.push(err.code || err.message);
    socket.destroy();
  });
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', opts.connections + 128, resolve));

  const child = fork(__filename, [
    '--client',
    '--connections', String(opts.connections),
    '--requests', String(opts.requests),
    '--pipelined-every', String(opts.pipelinedEvery),
    '--depth', String(opts.depth),
  ], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, FAST_RESPONSE_LOAD_PORT: String(srv.address().port) },
  });
  const childExit = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const fromChild = (type) => new Promise((resolve, reject) => {
    const onMessage = (msg) => {
      if (msg && msg.type === type) {
        child.off('message', onMessage);
        resolve(msg);
      }
    };
    child.on('message', onMessage);
    childExit.then((how) => reject(new Error(`the client exited (${how}) before '${type}'`)));
  });
  const settledRss = async (name) => {
    // Young-generation pages are touched as allocation goes through them:
    // go through all of them first, so that both measurements see them so.
    let keep = null;
    for (let i = 0; i < 400000; i++) keep = { i, next: keep, pad: [i, i, i, i] };
    keep = null;
    // Pages freed by a collection are unmapped by V8 a little later.
    for (let i = 0; i < 3; i++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const m = process.memoryUsage();
    f.memory[name] = m;
    return m.rss;
  };

  const deadline = setTimeout(() => {
    console.error(`load test: no result after ${opts.timeout} s`);
    child.kill('SIGKILL');
    process.exit(1);
  }, opts.timeout * 1000);
  deadline.unref();

  let failure = null;
  try {
    await fromChild('ready');
    gc();
    f.fdBefore = openFds();
    f.rssStart = process.memoryUsage().rss;
    let busy = 0n;
    for (const limit of f.checkpoints) {
      const t0 = process.hrtime.bigint();
      child.send({ type: 'go', limit });
      f.client = (await fromChild('phase')).result;
      busy += process.hrtime.bigint() - t0;
      f.rssSamples.push(await settledRss(limit === f.warmup ? 'warm' : limit === opts.requests ? 'end' : limit));
    }
    f.durationMs = Number(busy) / 1e6;
    f.rssWarm = f.rssSamples[0];
    f.rssEnd = f.rssSamples.at(-1);
    f.openSocketsAtEnd = openSockets;
    child.send({ type: 'close' });
    await fromChild('closed');
    // The client closed every connection; wait for the server side of them.
    const until = Date.now() + 30000;
    while (openSockets > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 50));
    f.openSocketsAfter = openSockets;
    f.fdAfter = openFds();
    child.send({ type: 'exit' });
    await childExit;
  } catch (err) {
    failure = err.message;
    child.kill('SIGKILL');
  }
  clearTimeout(deadline);
  srv.close();
  f.peakSockets = peakSockets;
  f.stats = fastResponse.stats();

  const checks = [];
  const check = (ok, what) => checks.push({ ok: Boolean(ok), what });
  const c = f.client;
  check(failure === null, failure === null ? 'the client ran to the end' : failure);
  if (c !== undefined) {
    check(c.responses === opts.requests,
          `every response received and byte-exact (${c.responses}/${opts.requests})`);
    check(c.errors.length === 0,
          `no client-side error${c.errors.length ? ': ' + c.errors.slice(0, 5).join(' | ') : ''}`);
    check(c.peakConnections >= Math.min(opts.connections, opts.requests),
          `${opts.connections} connections open at once (peak ${c.peakConnections})`);
  }
  check(f.handled === opts.requests, `the server handled ${f.handled}/${opts.requests} requests`);
  const serverErrors = [...f.socketErrors, ...f.clientErrors, ...f.handlerErrors];
  check(serverErrors.length === 0,
        `no server-side error${serverErrors.slice(0, 5).map((e) => ': ' + e).join('')}`);
  check(f.openSocketsAfter === 0, `every connection closed on the server too (${f.openSocketsAfter} open)`);
  check(f.fdBefore !== undefined && f.fdAfter === f.fdBefore,
        `file descriptors back to the start (${f.fdBefore} -> ${f.fdAfter})`);
  const growth = f.rssEnd - f.rssWarm;
  check(Number.isFinite(growth) && growth < opts.rssLimit * MiB,
        `RSS growth after warm-up < ${opts.rssLimit} MiB (${Number.isFinite(growth) ? formatMiB(growth) : '-'})`);
  if (!opts.baseline) check(f.stats.fast > 0 && f.stats.fallback > 0, 'fast writes and fallbacks both happened');
  f.checks = checks;
  f.ok = checks.every((x) => x.ok);

  printTable(f, opts);
  if (opts.json) console.log(JSON.stringify(f));
  process.exitCode = f.ok ? 0 : 1;
}

// --baseline: the same run with Node's own writeHead() + end() everywhere,
// to tell fast-response's figures from Node's.
function useNodeOnly(fastResponse) {
  const { ServerResponse } = http;
  const withLength = (headers, data) => ({ ...headers, 'Content-Length': Buffer.byteLength(data) });
  ServerResponse.prototype.fastEnd = ServerResponse.prototype.end;
  ServerResponse.prototype.fastWrite = ServerResponse.prototype.write;
  fastResponse.send = (res, status, headers, data) => res.writeHead(status, withLength(headers, data)).end(data);
  fastResponse.json = (res, status, value) => {
    const body = JSON.stringify(value);
    return res.writeHead(status, withLength({ 'Content-Type': 'application/json; charset=utf-8' }, body)).end(body);
  };
  fastResponse.template = (status, headers) => ({
    send: (res, data) => res.writeHead(status, withLength(headers, data)).end(data),
  });
}

function printTable(f, opts) {
  const s = f.stats;
  const c = f.client;
  const mib = (v) => (v === undefined ? '-' : formatMiB(v));
  const reasons = Object.entries(s.reasons).map(([k, v]) => `${k} ${v}`).join(', ');
  const rows = [
    ['Node', f.node + (opts.baseline ? ' (--baseline: Node\'s own end() everywhere)' : '')],
    ['connections', `${opts.connections} keep-alive, ${f.pipelinedConnections} of them pipelining ` +
      `${opts.depth} deep (peak ${c ? c.peakConnections : '-'} open)`],
    ['requests', `${opts.requests} (${f.warmup} of them warm-up)`],
    ['responses checked', c ? `${c.responses}, ${formatMiB(c.bytes)} received, ` +
      `${c.reconnects} reconnects after Connection: close` : '-'],
    ['duration', f.durationMs === undefined ? '-' : `${(f.durationMs / 1000).toFixed(2)} s`],
    ['responses/s', f.durationMs === undefined || !c ? '-' : String(Math.round(c.responses / (f.durationMs / 1000)))],
    ['fds before/after', `${f.fdBefore ?? '-'} / ${f.fdAfter ?? '-'}`],
    ['RSS at start', mib(f.rssStart)],
    ['RSS after warm-up', mib(f.rssWarm)],
    ['RSS at checkpoints', f.checkpoints.map((n, i) => `${n}: ${f.rssSamples[i] === undefined ? '-' : (f.rssSamples[i] / MiB).toFixed(1)}`).join(', ') + ' MiB'],
    ['RSS at end', f.rssEnd === undefined || f.rssWarm === undefined ? '-' :
      `${mib(f.rssEnd)} (${f.rssEnd >= f.rssWarm ? '+' : ''}${mib(f.rssEnd - f.rssWarm)}, limit ${opts.rssLimit} MiB)`],
    ['stats()', `fast ${s.fast}, partial ${s.partial}, fallback ${s.fallback}`],
    ['fallback reasons', reasons || '-'],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log('fast-response load test');
  for (const [k, v] of rows) console.log(`  ${k.padEnd(width)}  ${v}`);
  for (const x of f.checks) console.log(`  ${x.ok ? 'ok  ' : 'FAIL'}  ${x.what}`);
  console.log(f.ok ? 'PASS' : 'FAIL');
}

// ---------------------------------------------------------------------------
// Client (child process). Messages: 'ready', then for each checkpoint 'go'
// (with the id to stop at) -> 'phase' (every request below it answered,
// every connection idle), then 'close' -> 'closed' (every connection
// closed) -> 'exit'.

function client(opts) {
  const { ResponseParser } = require('../test/helpers/raw-http');
  const port = Number(process.env.FAST_RESPONSE_LOAD_PORT);
  const result = { responses: 0, bytes: 0, errors: [], reconnects: 0, peakConnections: 0 };
  const connections = new Set();
  let limit = 0; // ids below it may be sent in this phase
  let nextId = 0;
  let open = 0;
  let phaseReported = true;

  function fail(message) {
    if (result.errors.length < 50) result.errors.push(message);
  }

  // The end of a phase: every id of it sent and answered, every connection idle.
  function checkPhase() {
    if (phaseReported || nextId < limit) return;
    for (const conn of connections) if (!conn.idle()) return;
    phaseReported = true;
    process.send({ type: 'phase', result });
  }

  function startConnection(index) {
    const pipelined = index % opts.pipelinedEvery === 0;
    const depth = pipelined ? opts.depth : 1;
    const slow = pipelined && index % (opts.pipelinedEvery * SLOW_EVERY) === 0;
    let sent = 0;
    const inflight = [];
    let connected = false;
    let closing = false; // a `Connection: close` request was sent
    let chunks = [];
    const socket = net.connect(port, '127.0.0.1');
    open++;
    result.peakConnections = Math.max(result.peakConnections, open);

    const parser = new ResponseParser({
      onHead() {
        chunks = [];
      },
      onData(r, chunk) {
        chunks.push(chunk);
      },
      onEnd(r) {
        const id = inflight.shift();
        const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
        chunks = [];
        const expected = Buffer.from(bodyText(id, slow));
        const { kind } = plan(id, slow);
        if (r.status !== 200) {
          fail(`${id}: status ${r.status}`);
        } else if (!body.equals(expected)) {
          fail(`${id} (${KINDS[kind]}): body differs: ${body.length} bytes, ${expected.length} expected, ` +
               `starting ${JSON.stringify(body.toString('latin1', 0, 24))}`);
        } else if (CHUNKED_KINDS.has(kind) !== r.chunked) {
          fail(`${id} (${KINDS[kind]}): ${r.chunked ? 'chunked' : 'Content-Length'} framing`);
        } else if (closing && inflight.length === 0 && !/\bclose\b/i.test(String(r.fields.connection))) {
          fail(`${id}: no Connection: close in the answer to one`);
        } else {
          result.responses++;
        }
        conn.refill();
      },
    });

    const conn = {
      idle: () => connected && inflight.length === 0 && !closing,
      refill() {
        if (closing) return; // the server closes the connection
        let batch = '';
        while (inflight.length < depth && nextId < limit && !(slow && sent === SLOW_REQUESTS)) {
          const id = nextId++;
          inflight.push(id);
          sent++;
          if (slow) {
            batch += `GET /r/${id}/slow HTTP/1.1\r\nHost: load\r\n\r\n`;
            continue;
          }
          // A one-at-a-time connection asks to be closed with its
          // CLOSE_AFTER-th request and is replaced by a new one: sockets
          // come and go during the run.
          if (depth === 1 && sent === CLOSE_AFTER) {
            closing = true;
            batch += `GET /r/${id} HTTP/1.1\r\nHost: load\r\nConnection: close\r\n\r\n`;
            break;
          }
          batch += `GET /r/${id} HTTP/1.1\r\nHost: load\r\n\r\n`;
        }
        if (batch !== '') socket.write(batch);
        else if (inflight.length === 0) checkPhase();
      },
      close() {
        return new Promise((resolve) => {
          socket.once('close', resolve);
          socket.end();
        });
      },
    };
    connections.add(conn);

    socket.on('connect', () => {
      connected = true;
      conn.refill();
    });
    socket.on('data', (chunk) => {
      result.bytes += chunk.length;
      try {
        parser.push(chunk);
      } catch (err) {
        fail(`connection ${index}: ${err.message}`);
        socket.destroy();
        return;
      }
      if (slow) {
        socket.pause();
        setTimeout(() => socket.resume(), SLOW_PAUSE_MS);
      }
    });
    socket.on('error', (err) => fail(`connection ${index}: ${err.code || err.message}`));
    socket.on('close', () => {
      open--;
      if (!connections.delete(conn)) return; // closed by close()
      if (closing && inflight.length === 0) {
        // Closed by the server, as asked: carry on on a new connection.
        result.reconnects++;
        startConnection(index);
        return;
      }
      fail(`connection ${index} closed by the server with ${inflight.length} responses outstanding`);
      checkPhase();
    });
  }

  process.on('disconnect', () => process.exit(1)); // the server is gone
  process.on('message', async (msg) => {
    if (msg.type === 'go') {
      limit = msg.limit;
      phaseReported = false;
      if (connections.size === 0) {
        for (let i = 0; i < opts.connections; i++) startConnection(i);
      } else {
        for (const conn of connections) conn.refill();
      }
      checkPhase();
    } else if (msg.type === 'close') {
      const all = [...connections];
      connections.clear();
      await Promise.all(all.map((conn) => conn.close()));
      process.send({ type: 'closed' });
    } else if (msg.type === 'exit') {
      process.exit(0);
    }
  });
  process.send({ type: 'ready' });
}

// ---------------------------------------------------------------------------

const opts = parseArgs(process.argv.slice(2));
if (opts.client) {
  client(opts);
} else {
  server(opts).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
