'use strict';

// BENCHMARKING.md, case client POST on a keep-alive agent: an HTTP client
// loop, `inflight` requests in flight on an http.Agent({ keepAlive: true }),
// each a POST of a 61-byte JSON body with a Content-Type header
// (http.request() + end(body)), against a canned-response `net` server in a
// child process (benchmark/_canned-server.js) pinned to the other CPU. The
// client is what is measured: client requests/s (`rate`) and client CPU µs
// per request (`cpu`). Methods:
//
//   end      Node's own req.end(body) (the baseline)
//   fastEnd  req.fastEnd(body) after install()
//   patched  req.end(body) under install({ patchEnd: true })
//   bound    not an API: the ceiling of any replacement of end(). The whole
//            request (head and body) is one Buffer rendered once; Node's
//            end() keeps its bookkeeping, and when the socket is assigned
//            the Buffer goes out with the addon's one writev(2). No header
//            map walk, no rendering, no body encoding, no checks.
//
// The run checks what it measured: the server compares every request's
// bytes with the bytes Node's own end() sends for it (they must all be
// equal), and for fastEnd/patched fastResponse.stats().requests must say
// the package wrote (nearly) every request itself. A warm-up of `warmup=`
// seconds (default 1) is discarded; then `duration` seconds are measured.
// With `requests=N` the run is exactly N requests instead, from the start
// (benchmark/instructions.js --requests: instructions per request).
//
//   node benchmark/http/client-post.js
//   node benchmark/compare.js --filter client-post http
//   node benchmark/instructions.js --requests 20000,60000 client-post=end client-post=fastEnd client-post=bound

const { spawn } = require('node:child_process');
const http = require('node:http');
const path = require('node:path');
const common = require('../common.js');
const cases = require('../_cases.js');

const bench = common.createBenchmark(main, {
  inflight: [32],
  duration: [5],
  method: ['end', 'fastEnd', 'patched', 'bound'],
});

const BODY = JSON.stringify({ id: 12345, user: 'ada', items: [1, 2, 3], total: 42.5, ok: 1 });
if (Buffer.byteLength(BODY) !== 61) throw new Error('the body must be 61 bytes');
const DEFAULT_WARMUP_S = 1;
// Above this share of requests written by Node a fast method is not what
// the run measured (the first request of each connection is: it waits for
// 'connect').
const MAX_FALLBACK_SHARE = 0.01;
// Node 24 and later: requests stay Node's (lib/node-internals.js
// CLIENT_PATH_GAINS); read from the Node version, so that an older package
// (compare.js --old-ref) is measured the same way.
const NODE_SENDS_REQUESTS = Number(process.versions.node.split('.')[0]) >= 24;

const OutgoingMessage = Object.getPrototypeOf(http.ClientRequest.prototype);
const nodeEnd = OutgoingMessage.end;
const nodeFlushOutput = OutgoingMessage._flushOutput;
const originalEnd = http.ClientRequest.prototype.end;

function checkError(message) {
  const err = new Error(message);
  err.check = true;
  return err;
}

/** The request's bytes, as Node's own end(BODY) sends them. */
function expectedRequest(port) {
  return `POST / HTTP/1.1\r\nContent-Type: application/json\r\nHost: 127.0.0.1:${port}\r\n` +
         `Connection: keep-alive\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`;
}

/**
 * How `method` ends a request: { send(req), fr, skip }. `skip` says why the
 * package under test (compare.js --old-ref) cannot run it.
 */
function prepare(method, port) {
  if (method === 'end') return { send: (req) => req.end(BODY), fr: null, skip: null };
  const fr = require(cases.packagePath);
  if (fr.native === false) {
    throw checkError(`fast-response's native addon did not load from ${cases.packagePath} ` +
                     `(${fr.loadError && fr.loadError.message}): run npm run rebuild`);
  }
  const missing = (what) => ({ send: null, fr, skip: `method=${method}: fast-response at ${cases.packagePath} has no ${what}` });
  switch (method) {
    case 'fastEnd':
      fr.install();
      if (typeof http.ClientRequest.prototype.fastEnd !== 'function') return missing('req.fastEnd()');
      return { send: (req) => req.fastEnd(BODY), fr, skip: null };
    case 'patched':
      fr.install({ patchEnd: true });
      if (http.ClientRequest.prototype.end === originalEnd && !NODE_SENDS_REQUESTS) {
        return missing('install({ patchEnd: true }) for requests');
      }
      return { send: (req) => req.end(BODY), fr, skip: null };
    case 'bound': {
      const send = boundSend(port);
      return send === null ? missing("the addon's writeRendered() and lib/complete.js countBytes()") :
        { send, fr: null, skip: null };
    }
    default:
      throw new Error(`unknown method=${method}`);
  }
}

/**
 * method=bound: the whole request pre-rendered as one Buffer; Node's end()
 * does its bookkeeping with that head, and the request's _flushOutput()
 * writes the Buffer with the addon's writeRendered() (a new connection,
 * still connecting, is written by Node).
 */
function boundSend(port) {
  let internals;
  try {
    const { binding, args, results } = require(path.join(cases.packagePath, 'lib', 'binding.js'));
    const { countBytes } = require(path.join(cases.packagePath, 'lib', 'complete.js'));
    if (binding === null || typeof binding.writeRendered !== 'function' || typeof countBytes !== 'function') return null;
    internals = { binding, L: { ...binding.layout }, args, results, countBytes };
  } catch {
    return null;
  }
  const { binding, L, args, results, countBytes } = internals;
  const request = Buffer.from(expectedRequest(port), 'latin1');
  const head = expectedRequest(port).slice(0, -BODY.length);
  const length = Buffer.byteLength(BODY);
  function flushBound(socket) {
    const handle = socket._handle;
    if (socket.connecting || handle === null || socket.writableLength !== 0) return nodeFlushOutput.call(this, socket);
    const outputData = this.outputData;
    const callback = outputData[outputData.length - 1].callback;
    this.outputData = [];
    this.outputSize = 0;
    args[L.ARG_FD] = handle.fd;
    args[L.ARG_WRITER] = -1;
    args[L.ARG_BODY_TAG] = 0;
    args[L.ARG_BODY_FLAGS] = L.BODY_BYTES;
    args[L.ARG_BODY_UNITS] = 0;
    args[L.ARG_HEAD_UNITS] = 0;
    if (binding.writeRendered('', request) !== 0) throw new Error('bound: the kernel took part of a request');
    countBytes(handle, results[L.RESULT_WRITTEN]);
    socket._unrefTimer();
    process.nextTick(callback, null);
    return true;
  }
  return (req) => {
    req._header = head;
    req._contentLength = length;
    nodeEnd.call(req, BODY);
    req._flushOutput = flushBound;
  };
}

/** Starts the canned-response server, pinned to the load generator's CPU. */
function startServer() {
  const file = path.join(__dirname, '..', '_canned-server.js');
  const pin = process.env.FAST_RESPONSE_BENCH_PIN;
  const cpu = pin ? pin.split(',')[1] : null;
  const child = cpu !== null && cpu !== undefined ?
    spawn('taskset', ['-c', cpu, process.execPath, file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) :
    spawn(process.execPath, [file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  process.on('exit', () => child.kill());
  return child;
}

/** Sends `message` to the server and resolves to its answer of type `type`. */
function ask(server, message, type) {
  return new Promise((resolve, reject) => {
    const onMessage = (m) => {
      if (m && m.type === type) {
        server.removeListener('message', onMessage);
        resolve(m);
      }
    };
    server.on('message', onMessage);
    server.once('exit', (code) => reject(new Error(`the canned-response server exited (${code})`)));
    if (message !== null) server.send(message);
  });
}

async function main({ inflight, duration, method }) {
  const server = startServer();
  const { port } = await ask(server, null, 'listening');
  const { send, fr, skip } = prepare(method, port);
  if (skip !== null) {
    bench.skip(skip);
    return;
  }
  await ask(server, { type: 'expect', request: expectedRequest(port) }, 'expected');
  // requests=N: exactly N requests, measured from the first.
  const total = Number(bench.extra.requests ?? 0);
  const warmup = total > 0 ? 0 : Number(bench.extra.warmup ?? DEFAULT_WARMUP_S);
  const agent = new http.Agent({ keepAlive: true });
  // Connections opened: the first request of each is Node's ('connecting').
  let connections = 0;
  const createConnection = agent.createConnection;
  agent.createConnection = function countedConnection(...args) {
    connections++;
    return createConnection.apply(this, args);
  };
  const options = {
    agent, host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'Content-Type': 'application/json' },
  };
  let completed = 0;
  let issued = 0;
  let running = true;
  let failure = null;
  let allDone = null;
  const fail = (err) => {
    if (failure === null) failure = err;
    running = false;
    if (allDone !== null) allDone();
  };
  const onEnd = () => {
    completed++;
    if (total > 0 && completed === total && allDone !== null) allDone();
    if (running && (total === 0 || issued < total)) issue();
  };
  const onData = () => {};
  const onResponse = (res) => {
    if (res.statusCode !== 200) fail(checkError(`status ${res.statusCode}`));
    res.on('data', onData);
    res.on('end', onEnd);
  };
  function issue() {
    issued++;
    const req = http.request(options, onResponse);
    req.on('error', fail);
    send(req);
  }
  const finished = new Promise((resolve) => {
    allDone = resolve;
  });
  const cpuStart = process.cpuUsage();
  const tStart = process.hrtime.bigint();
  for (let i = 0; i < inflight && (total === 0 || i < total); i++) issue();

  if (warmup > 0) await new Promise((resolve) => setTimeout(resolve, warmup * 1000));
  if (fr !== null && total === 0) fr.resetStats();
  const connections0 = total > 0 ? 0 : connections;
  const count0 = completed;
  const cpu0 = total > 0 ? cpuStart : process.cpuUsage();
  const t0 = total > 0 ? tStart : process.hrtime.bigint();
  if (total > 0) await finished;
  else await new Promise((resolve) => setTimeout(resolve, duration * 1000));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  const requests = completed - count0;
  running = false;
  if (failure !== null) throw failure;

  const checked = await ask(server, { type: 'check' }, 'checked');
  if (checked.first !== expectedRequest(port)) {
    throw checkError(`the server received ${JSON.stringify(checked.first)}, expected ${JSON.stringify(expectedRequest(port))}`);
  }
  if (checked.mismatched !== 0) throw checkError(`${checked.mismatched} of ${checked.requests} requests differ from Node's`);
  if (!(requests > 0)) throw checkError('no requests completed');
  const details = fr === null ? {} : checkFast(method, fr.stats().requests, connections - connections0);
  agent.destroy();
  server.kill();
  const cpuMicros = cpu.user + cpu.system;
  bench.report({
    rate: requests / seconds,
    time: seconds,
    cpu: cpuMicros / requests,
    busy: cpuMicros / (seconds * 1e6),
    requests,
    ...details,
  });
}

/**
 * A fast method must have written (nearly) every request itself, the first
 * request of each of the `opened` connections aside.
 */
function checkFast(method, stats, opened) {
  if (stats === undefined) throw checkError(`method=${method}: the package's stats() has no requests`);
  if (NODE_SENDS_REQUESTS) {
    // Node 24+: the package leaves requests to Node ('node-sends-request'):
    // the run measures what installing it costs there, reported, not checked.
    return { fast: stats.fast, partial: stats.partial, fallback: stats.fallback, fastChecked: false,
             nodePath: 'Node 24+: requests are Node\'s own (node-sends-request)' };
  }
  const written = stats.fast + stats.partial + stats.fallback;
  const firsts = Math.min(stats.reasons.connecting || 0, opened);
  if (written === 0 || stats.fallback - firsts > (written - firsts) * MAX_FALLBACK_SHARE) {
    throw checkError(`method=${method} measured Node's path, not the fast one: ${stats.fast} fast, ` +
                     `${stats.partial} partial, ${stats.fallback} fallback requests ` +
                     `(reasons: ${JSON.stringify(stats.reasons)})`);
  }
  return { fast: stats.fast, partial: stats.partial, fallback: stats.fallback };
}
