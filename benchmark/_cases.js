'use strict';

// What the http/ case files share: the package under test, the `method`
// config (BENCHMARKING.md's table: `end` is the Node baseline, or `plain` in
// the framework cases; the others are fast-response's), the server, and the
// checks that a run measured what its name says: the right responses
// (bench.http's probe) and, for a fast method, the fast path taken
// (fastResponse.stats()).

const http = require('node:http');
const path = require('node:path');
const { isBaseline } = require('./_stats');
const apps = require('./_apps');
// Node 24 and later collect a tick's chunked writes into one chunk
// (kChunkedBuffer); Node 18 to 22 frame each write.
const { NODE_COLLECTS_TICK_CHUNKS } = require('../lib/node-internals');

/** The package under test: this repository, or compare.js --old-ref/--new-ref builds. */
const packagePath = process.env.FAST_RESPONSE_PATH || path.join(__dirname, '..');

/** BENCHMARKING.md: body lengths in bytes. */
const LENS = [4, 64, 1024, 16384, 102400];

// Above this share of fallbacks a fast method is not what the run measured.
const MAX_FALLBACK_SHARE = 0.01;

/** `len` bytes of 'a', as a string or a Buffer. */
function body(type, len) {
  const s = 'a'.repeat(len);
  if (type === 'string') return s;
  if (type === 'buffer') return Buffer.from(s, 'latin1');
  throw new Error(`type=${type}: use string or buffer`);
}

// The bytes of {"hello":""}: the shortest body of route=json.
const JSON_OVERHEAD = '{"hello":""}'.length;

/**
 * A route of the framework cases (http/express.js, fastify.js, koa.js), as
 * the frameworks' own hello-world benchmarks (github.com/fastify/benchmarks)
 * have them: `json` sends the object { hello: 'aaa…' } (their { hello:
 * 'world' } at `len` bytes of JSON: 12 bytes of `{"hello":""}` and len - 12
 * of 'a'), `text` a string of `len` bytes of 'a'. Returns { value, body }:
 * what the handler sends and the bytes expected on the wire; null when
 * `len` is too short for the route.
 */
function appRoute(route, len) {
  if (route === 'json') {
    if (len < JSON_OVERHEAD) return null;
    const value = { hello: 'a'.repeat(len - JSON_OVERHEAD) };
    return { value, body: JSON.stringify(value) };
  }
  if (route === 'text') return { value: body('string', len), body: body('string', len) };
  throw new Error(`route=${route}: use json or text`);
}

const originalEnd = http.ServerResponse.prototype.end;

/**
 * Loads the package for `method` and installs what it needs. Returns
 * { fr, skip, internals }: `skip` is why the method cannot run with this
 * package (an older ref without it), else null; `internals` (method=bound)
 * the package's write path (boundInternals()). A baseline (`end`, `plain`)
 * loads nothing: pure Node.
 */
function prepare(method) {
  if (isBaseline(method)) return { fr: null, skip: null };
  let fr;
  try {
    fr = require(packagePath);
  } catch (err) {
    throw new Error(`cannot load fast-response from ${packagePath}: ${err.message}`);
  }
  if (fr.native === false) {
    const err = new Error(`fast-response's native addon did not load from ${packagePath} ` +
                          `(${fr.loadError && fr.loadError.message}): every call would take Node's path; ` +
                          'run npm run rebuild');
    err.check = true;
    throw err;
  }
  const missing = (what) => ({ fr, skip: `method=${method}: fast-response at ${packagePath} has no ${what}` });
  switch (method) {
    case 'fastEnd':
    case 'fastWrite':
      if (typeof fr.install !== 'function') return missing('install()');
      fr.install();
      if (typeof http.ServerResponse.prototype.fastEnd !== 'function') return missing('res.fastEnd()');
      break;
    case 'send':
      if (typeof fr.send !== 'function') return missing('send()');
      break;
    case 'template':
      if (typeof fr.template !== 'function') return missing('template()');
      break;
    case 'bound': {
      // benchmark/http/bound.js: the package's own write path, no rendering.
      const internals = boundInternals(packagePath);
      if (internals === null) return missing('the addon\'s writeRendered() and lib/ complete()');
      return { fr, skip: null, internals };
    }
    case 'patched':
      if (typeof fr.install !== 'function') return missing('install()');
      fr.install({ patchEnd: true });
      if (http.ServerResponse.prototype.end === originalEnd) return missing('install({ patchEnd: true })');
      break;
    default:
      throw new Error(`unknown method=${method}`);
  }
  return { fr, skip: null };
}

/**
 * Checks fastResponse.stats() counts of the measured run: a fast method
 * must have written (nearly) every response itself. `stats` may be the sum
 * over cluster workers. `firstBursts`: responses that go to Node's path by
 * design ('not-current'): on each pipelining connection, the second
 * response of its first burst, which shows the socket pipelining
 * (lib/pipeline.js), and any response whose handler ends before its
 * predecessor's; at most c × (depth − 1) are taken for these (a new-user
 * check's 1-second run of depth 16 once stopped at 750 of 72,560, 1.03 %,
 * when a whole first burst went Node's way). Returns the counts for the
 * report.
 */
function checkFastStats(method, stats, firstBursts = 0) {
  if (isBaseline(method)) return {};
  if (stats === null) return { fastChecked: false };
  // Responses ended and chunks written by the addon (res.write(): `writes`).
  const writes = stats.writes || 0;
  const served = stats.fast + stats.partial + writes + stats.fallback;
  // A bound that writes past the package altogether (http/stream.js).
  if (method === 'bound' && served === 0) return { fastChecked: false };
  // A streamed response ends with end() and no data, Node's own (the last
  // chunk) where the addon does not write it with the tick's chunks:
  // 'no-body', one per response at most; and a tick's later writes go into
  // the corked socket by design (lib/stream.js): 'socket-busy'.
  const lastChunks = writes > 0 ? (stats.reasons['no-body'] || 0) + (stats.reasons['socket-busy'] || 0) : 0;
  const firstBurst = Math.min(stats.reasons['not-current'] || 0, firstBursts);
  if (served === 0 || stats.fallback - lastChunks - firstBurst > served * MAX_FALLBACK_SHARE) {
    const err = new Error(`method=${method} measured Node's path, not the fast one: ${stats.fast} fast, ` +
                    `${stats.partial} partial, ${writes} chunk writes, ${stats.fallback} fallback writes ` +
                    `(reasons: ${JSON.stringify(stats.reasons)})`);
    err.check = true;
    throw err;
  }
  return { fast: stats.fast, partial: stats.partial, writes, fallback: stats.fallback };
}

/**
 * Under `closeAfterBurst`, the server accepted a connection for each burst
 * (but the bursts each of the `c` connections left unfinished when the run
 * stopped): else the load was not the one measured.
 */
function checkBurstConnections(requests, pipeline, c, opened) {
  const bursts = Math.floor(requests / pipeline);
  if (opened.count >= bursts - c) return;
  const err = new Error(`closeAfterBurst: the server accepted ${opened.count} connections for ${requests} ` +
                        `responses in bursts of ${pipeline} (at least ${bursts - c} expected)`);
  err.check = true;
  throw err;
}

function readStats(fr) {
  return fr !== null && typeof fr.stats === 'function' ? fr.stats() : null;
}

function resetStats(fr) {
  if (fr !== null && typeof fr.resetStats === 'function') fr.resetStats();
}

/**
 * The head the bound cases send: what writeHead(200, { Content-Type:
 * text/plain, Content-Length: len }) renders on a keep-alive connection
 * (len null: no Content-Length, a chunked body, as Node frames a body
 * written without one), rendered again every second (Date). Returns a
 * function giving the current one; `onRender(head)`, when given, is called
 * with each new one.
 *
 * @param {number|null} len the body's length in bytes, or null.
 * @param {(head: string) => void} [onRender]
 * @returns {() => string}
 */
function renderedHead(len, onRender) {
  let head = '';
  const render = () => {
    head = `HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n${len === null ? '' : `Content-Length: ${len}\r\n`}` +
           `Date: ${new Date().toUTCString()}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n` +
           `${len === null ? 'Transfer-Encoding: chunked\r\n' : ''}\r\n`;
    if (onRender !== undefined) onRender(head);
  };
  render();
  setInterval(render, 1000).unref();
  return () => head;
}

/**
 * What benchmark/http/bound.js calls, for this package's layout (the addon's
 * `layout`, lib/complete.js) or an older one (lib/write.js, when comparing
 * git refs): writeRendered(fd, head, body, bodyFlags, units) -> bytes not
 * written, written() -> bytes writev(2) took, complete(res, written,
 * remaining, chunk), and the body kinds. null when neither is there.
 */
function boundInternals(packagePath) {
  const lib = (name) => {
    try {
      return require(path.join(packagePath, 'lib', name));
    } catch {
      return null;
    }
  };
  const loaded = lib('binding.js');
  const completion = lib('complete.js');
  if (loaded !== null && loaded.binding !== null && loaded.binding.layout !== undefined && completion !== null) {
    const { binding, args, results } = loaded;
    const L = { ...binding.layout };
    return {
      BODY_BYTES: L.BODY_BYTES,
      BODY_UTF8: L.BODY_UTF8,
      HEAD_UTF8: L.HEAD_UTF8,
      writeRendered(fd, head, body, bodyFlags, units) {
        args[L.ARG_FD] = fd;
        args[L.ARG_BODY_FLAGS] = bodyFlags;
        args[L.ARG_BODY_UNITS] = units;
        args[L.ARG_HEAD_UNITS] = head.length;
        return binding.writeRendered(head, body);
      },
      written: () => results[L.RESULT_WRITTEN],
      complete: (res, written, remaining, chunk) => completion.complete(res, written, remaining, chunk, undefined),
    };
  }
  const old = lib('write.js');
  if (old === null || typeof old.writeRendered !== 'function' || typeof old.complete !== 'function') return null;
  return {
    BODY_BYTES: old.BODY_BYTES,
    BODY_UTF8: old.BODY_UTF8,
    HEAD_UTF8: old.HEAD_UTF8,
    writeRendered: old.writeRendered,
    written: () => old.results[3],
    complete: (res, written, remaining, chunk) => old.complete(res, res.socket, written, remaining, chunk, undefined),
  };
}

/**
 * Serves `handlers[method](fr, internals)` on 127.0.0.1 and has bench.http() load it,
 * checking the responses against `expect` ({ status, headers, body }) and
 * the fast path's counts. A method the package lacks is skipped. `pipeline`:
 * requests each connection sends in one write (default 1);
 * `closeAfterBurst`: a connection per burst (bench.http()). `nodePath`: the
 * case measures Node's own path under this method by design (the counts are
 * reported, not checked), and why.
 */
function serve(bench, { method, c, duration, pipeline, closeAfterBurst, nodePath }, handlers, expect) {
  const { fr, skip, internals } = prepare(method);
  if (skip !== null) {
    bench.skip(skip);
    return;
  }
  const server = http.createServer(handlers[method](fr, internals));
  // Under closeAfterBurst, the connections the server accepted (from the
  // measured run's start).
  const opened = closeAfterBurst ? { count: 0 } : undefined;
  if (opened !== undefined) server.on('connection', () => { opened.count++; });
  server.listen(0, '127.0.0.1', () => {
    load(bench, { fr, method, c, duration, pipeline, closeAfterBurst, opened, nodePath, port: server.address().port },
         expect,
         () => server.close());
  });
}

/** bench.http() on `port` with the response and fast-path checks; `close` once measured. */
function load(bench, { fr, method, c, duration, pipeline, closeAfterBurst, opened, nodePath, port, path: urlPath },
              expect, close) {
  bench.http({
    port,
    path: urlPath,
    connections: c,
    duration,
    pipeline,
    closeAfterBurst,
    expect,
    before: () => {
      resetStats(fr);
      if (opened !== undefined) opened.count = 0;
    },
    after: (result) => {
      if (closeAfterBurst) checkBurstConnections(result.requests, pipeline, c, opened);
      if (nodePath === undefined) {
        // A connection per burst: every burst is a first burst, its first
        // response queued behind another Node's ('not-current').
        const firstBursts = !(pipeline > 1) ? 0 :
          closeAfterBurst ? Math.ceil(result.requests / pipeline) + c : c * (pipeline - 1);
        return checkFastStats(method, readStats(fr), firstBursts);
      }
      const counts = readStats(fr);
      return counts === null ? {} : { fastChecked: false, fast: counts.fast, writes: counts.writes || 0,
                                      fallback: counts.fallback, nodePath,
                                      uncorks: counts.uncorks };
    },
  }, close);
}

/**
 * A framework's app (benchmark/http/express.js, fastify.js, koa.js; built
 * by _apps.js[name].start()) serving `route` (appRoute()) at '/':
 * `method=plain` runs it without fast-response, `method=patched` under
 * install({ patchEnd: true }), installed before the framework is loaded,
 * as `node -r fast-response/register app.js` does. The framework's module
 * is `require(name)`, from this repository's devDependencies. The
 * responses must carry the route's Content-Type (_apps.js contentTypes)
 * and the body's Content-Length. A framework that is not installed or does
 * not load on this Node (Fastify 5 needs Node 20), or a `len` too short for
 * the route, skips the run with the reason.
 */
function serveApp(bench, name, { route, len, method, c, duration }) {
  if (!['plain', 'patched'].includes(method)) throw new Error(`unknown method=${method}: use plain or patched`);
  const { contentTypes, start } = apps[name];
  const sent = appRoute(route, len);
  if (sent === null) {
    bench.skip(`route=${route} needs len=${JSON_OVERHEAD} or more (the bytes of {"hello":""})`);
    return;
  }
  const { fr, skip } = prepare(method);
  if (skip !== null) {
    bench.skip(skip);
    return;
  }
  let framework;
  try {
    framework = require(name);
  } catch (err) {
    bench.skip(`${name} does not load on Node ${process.version} (${err.code || err.message}); ` +
               'it is a devDependency of this repository: npm install');
    return;
  }
  const expect = {
    status: 200,
    headers: { 'Content-Type': contentTypes[route], 'Content-Length': Buffer.byteLength(sent.body) },
    body: sent.body,
  };
  Promise.resolve(start(framework, sent.value, route)).then(({ port, close }) => {
    load(bench, { fr, method, c, duration, port }, expect, close);
  }).catch((err) => bench.fail(err));
}

/**
 * The handlers of the pipelined cases (http/pipeline.js,
 * http/pipeline-close.js), by method: writeHead(200, headers) then
 * res.end(chunk) (`end`, the baseline, and `patched`, under install({
 * patchEnd: true })) or res.fastEnd(chunk) (`fastEnd`). Each is a factory
 * as serve() takes them.
 */
function pipelinedHandlers(chunk, headers) {
  const writeHeadAndEnd = () => (req, res) => {
    res.writeHead(200, headers);
    res.end(chunk);
  };
  return {
    end: writeHeadAndEnd,
    patched: writeHeadAndEnd,
    fastEnd: () => (req, res) => {
      res.writeHead(200, headers);
      res.fastEnd(chunk);
    },
  };
}

/**
 * The streamed response's handler (http/stream.js, instructions-stream.js):
 * writeHead(200, headers), `writes` writes of `chunk` with res[write]()
 * (all in one tick, `tick` 'one', or one per turn of the event loop,
 * setImmediate between them, 'each'), then res[end]() without data; with
 * `endData`, the last chunk is end()'s data instead of a write()'s.
 */
function streamedHandler({ chunk, writes, tick, headers, write, end, endData = false }) {
  const first = endData ? 1 : 0;
  return (req, res) => {
    res.writeHead(200, headers);
    if (tick === 'one') {
      for (let i = first; i < writes; i++) res[write](chunk);
      if (endData) res[end](chunk);
      else res[end]();
      return;
    }
    let left = writes;
    const next = () => {
      if (endData && left === 1) {
        res[end](chunk);
        return;
      }
      res[write](chunk);
      if (--left === 0) res[end]();
      else setImmediate(next);
    };
    next();
  };
}

/**
 * The bound of a streamed response (http/stream.js method=bound, and
 * instructions-stream.js): the head and the chunks framed in advance (the
 * head rendered once a second), one socket.write() per tick (tick=one: head
 * and all chunks as one Buffer, framed as the running Node frames them), the socket corked for the tick as Node
 * corks it, and Node's own end() for the last chunk and the response's
 * bookkeeping: nothing rendered, framed or validated.
 *
 * @param {string} chunk each write's chunk (written as UTF-8, as the
 *   handlers write it).
 * @param {number} writes chunks per response.
 * @param {'one'|'each'} tick all writes in one tick, or one per tick.
 * @returns {(req: import('http').IncomingMessage, res: import('http').ServerResponse) => void}
 */
function streamedBound(chunk, writes, tick) {
  const framed = (data) => Buffer.from(`${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`, 'utf8');
  const frame = framed(chunk);
  // In one tick, the chunks framed as the running Node frames them: Node 24
  // and later collect a tick's writes into one chunk, Node 18 to 22 frame
  // each write (the same bytes as Node's res.write() path, Date masked).
  let frames = [frame];
  if (tick === 'one') frames = NODE_COLLECTS_TICK_CHUNKS ? [framed(chunk.repeat(writes))] : Array(writes).fill(frame);
  let first = null;
  const headNow = renderedHead(null, (head) => {
    first = Buffer.concat([Buffer.from(head, 'latin1'), ...frames]);
  });
  const uncork = (socket) => socket.uncork();
  const send = (res, bytes) => {
    const socket = res.socket;
    if (!socket.writableCorked) {
      socket.cork();
      process.nextTick(uncork, socket);
    }
    socket.write(bytes);
  };
  return (req, res) => {
    // What writeHead() and the first write() leave on the response.
    res._header = headNow();
    res._headerSent = true;
    res.chunkedEncoding = true;
    send(res, first);
    if (tick === 'one') {
      res.end();
      return;
    }
    let left = writes - 1;
    const next = () => {
      send(res, frame);
      if (--left === 0) res.end();
      else setImmediate(next);
    };
    setImmediate(next);
  };
}

module.exports = {
  pipelinedHandlers,
  streamedHandler,
  streamedBound,
  packagePath,
  renderedHead,
  LENS,
  body,
  appRoute,
  prepare,
  checkFastStats,
  readStats,
  resetStats,
  serve,
  serveApp,
};
